// ulpgate report: the JSON reports of a session (files, or folders of them)
// as one self-contained HTML page (tools/html_report.h).
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <iostream>

#include "suites/inputs/inputs.h"
#include "suites/reports/json_file.h"
#include "suites/reports/report.h"
#include "tools/cli.h"
#include "tools/html_report.h"
#include "tools/text_table.h"

namespace ulpgate {
namespace {

struct ReportArgs {
  std::vector<std::string> inputs;
  std::string html_path;
  std::string title = "ulpgate report";
};

void Report(const ReportArgs& args) {
  std::vector<std::string> paths;
  for (const std::string& input : args.inputs) {
    std::error_code error;
    if (std::filesystem::is_directory(input, error)) {
      std::vector<std::string> found;
      for (const auto& entry : std::filesystem::directory_iterator(input)) {
        if (entry.path().extension() == ".json") found.push_back(entry.path().string());
      }
      std::sort(found.begin(), found.end());
      paths.insert(paths.end(), found.begin(), found.end());
    } else if (std::filesystem::exists(input, error)) {
      paths.push_back(input);
    } else {
      throw InputError(input + ": no such file or folder");
    }
  }
  std::vector<ReportFile> files;
  std::vector<std::string> skipped;
  for (const std::string& path : paths) {
    ReportFile f{path, ReadJsonFile(path)};
    const std::string format =
        f.json.is_object() && f.json.contains("format") && f.json["format"].is_string()
            ? f.json["format"].get<std::string>()
            : "";
    if (!IsReportFormat(format)) {
      skipped.push_back(path + (format.empty() ? "" : " (" + format + ")"));
      continue;
    }
    files.push_back(std::move(f));
  }
  if (files.empty()) {
    throw InputError("no run, matrix, check, drift or gate report among " + std::to_string(paths.size()) +
                     " JSON files");
  }
  WriteTextFile(args.html_path, HtmlReport(files, args.title));
  PrintWrapped(std::cout, fmt::format("report: {} reports -> {}", files.size(), args.html_path), 2);
  for (const std::string& s : skipped) std::cout << "  left out (not a report the page draws): " << s << '\n';
  // A faulted case is never a pass: each is named (the page draws it red)
  // and the exit status says a kernel faulted.
  size_t faults = 0;
  const auto fault = [&](const std::string& path, const std::string& name, const std::string& text) {
    std::cout << "  ";
    PrintWrapped(std::cout, fmt::format("FAULT {}: {}: {}; not measured", path, name, text), 4, 2);
    ++faults;
  };
  for (const ReportFile& f : files) {
    for (const char* list : {"results", "cells"}) {
      if (!f.json.contains(list) || !f.json[list].is_array()) continue;
      for (const nlohmann::ordered_json& c : f.json[list]) {
        if (!c.is_object() || !c.contains("fault")) continue;
        fault(f.path, c.value("variant", std::string("?")) + "@" + c.value("target", std::string("?")),
              FaultText(c));
      }
    }
    if (f.json.contains("faults") && f.json["faults"].is_array()) {
      for (const nlohmann::ordered_json& g : f.json["faults"]) {
        if (g.is_string()) fault(f.path, "gate", g.get<std::string>());
      }
    }
  }
  if (faults > 0) ExitStatus() = kExitKernelFault;
}

}  // namespace

void AddReportCommand(CLI::App& app) {
  auto args = std::make_shared<ReportArgs>();
  auto* cmd = app.add_subcommand(
      "report",
      "One self-contained HTML page from JSON reports (run, matrix, check, drift, gate): histograms, "
      "error maps, the target matrix, checks of outputs made elsewhere, drift curves and attribution, "
      "the gate's verdict and rows with their waivers and replay commands");
  cmd->add_option("inputs", args->inputs, "JSON reports, or folders of them (every *.json)")
      ->required();
  cmd->add_option("--html", args->html_path, "Write the page here")->required();
  cmd->add_option("--title", args->title, "The page's title")->capture_default_str();
  cmd->callback([args] { Report(*args); });
}

}  // namespace ulpgate
