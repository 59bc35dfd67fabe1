// The command line as a user meets it: exit statuses, one-line errors, the
// JSON report's fields.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <array>
#include <cstdio>
#include <fstream>
#include <string>

namespace {

struct Outcome {
  int status;
  std::string output;  // stdout and stderr
};

Outcome Ulpgate(const std::string& arguments) {
  const std::string command = std::string(ULPGATE_BINARY) + " " + arguments + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  Outcome outcome{-1, ""};
  if (!pipe) return outcome;
  std::array<char, 4096> buffer;
  size_t got;
  while ((got = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) outcome.output.append(buffer.data(), got);
  const int status = pclose(pipe);
  outcome.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return outcome;
}

size_t Lines(const std::string& text) {
  size_t n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

TEST(Cli, BadArgumentsGiveOneLineAndStatus2) {
  for (const std::string args :
       {"run", "run --kernel nope", "run --kernel tanh_bwd --variant nope",
        "run --kernel tanh_bwd --target NOPE", "run --kernel tanh_bwd --suite nope",
        "run --kernel tanh_bwd --n abc", "run --kernel tanh_bwd --inputs /nonexistent/f",
        "run --kernel tanh_bwd --suite domain --inputs /dev/null", "frobnicate"}) {
    const Outcome o = Ulpgate(args);
    EXPECT_EQ(o.status, 2) << args << "\n" << o.output;
    EXPECT_EQ(Lines(o.output), 1u) << args << "\n" << o.output;
    EXPECT_EQ(o.output.rfind("ulpgate: error: ", 0), 0u) << args << "\n" << o.output;
  }
}

TEST(Cli, MalformedInputFileNamesTheLine) {
  const std::string path = testing::TempDir() + "/cli_bad_inputs.txt";
  std::ofstream(path) << "0x1p0 0.5\n1 2 3\n";
  const Outcome o = Ulpgate("run --kernel tanh_bwd --inputs " + path);
  EXPECT_EQ(o.status, 2);
  EXPECT_NE(o.output.find(path + ":2: expected 2 values"), std::string::npos) << o.output;
}

TEST(Cli, RunWritesTheReport) {
  const std::string inputs = testing::TempDir() + "/cli_inputs.txt";
  const std::string report = testing::TempDir() + "/cli_report.json";
  std::ofstream(inputs) << "# grad t\n0x1.537fa2p+4 0x1.ffffd2p-1\n1 0.5\ninf 0.5\n";
  const Outcome o = Ulpgate("run --kernel tanh_bwd --variant all --target all --inputs " + inputs +
                            " --json " + report);
  ASSERT_EQ(o.status, 0) << o.output;
  EXPECT_NE(o.output.find("histogram of ULP error"), std::string::npos);
  EXPECT_NE(o.output.find("worst:"), std::string::npos);
  std::ifstream in(report);
  const nlohmann::json j = nlohmann::json::parse(in);
  ASSERT_GE(j["results"].size(), 4u);
  for (const auto& r : j["results"]) {
    for (const char* key : {"op", "variant", "target", "dtype", "suite", "seed", "n", "histogram",
                            "special_mismatch", "signed_zero_mismatch", "max_ulp", "max_input",
                            "mean_ulp", "correctly_rounded", "conformance"}) {
      EXPECT_TRUE(r.contains(key)) << key;
    }
    EXPECT_EQ(r["n"], 3);
    EXPECT_EQ(r["dtype"], "f32");
    EXPECT_EQ(r["histogram"]["counts"].size(), r["histogram"]["bounds"].size() + 1);
    EXPECT_EQ(r["conformance"]["mismatches"], 0);
    EXPECT_EQ(r["max_input"]["grad"].get<std::string>().rfind("0x", 0), 0u);
  }
  // The MAC form's NaN at grad = inf is a special mismatch, the op is inf.
  EXPECT_EQ(j["results"][0]["variant"], "mac");
  EXPECT_EQ(j["results"][0]["special_mismatch"], 1);
}

TEST(Cli, BestCanBeListedWithOtherTargets) {
  // "best" alone, or in a list as the README's drift example uses it; a
  // target named twice runs once.
  const Outcome o = Ulpgate("run --kernel tanh_bwd --variant mac --target best,SCALAR,SCALAR --n 10 --quiet");
  ASSERT_EQ(o.status, 0) << o.output;
  size_t rows = 0;
  for (size_t at = 0; (at = o.output.find("\nmac ", at)) != std::string::npos; ++at) ++rows;
  EXPECT_EQ(rows, 2u) << o.output;
}

TEST(Cli, ListShowsTargetsAndVariants) {
  const Outcome o = Ulpgate("list --json");
  ASSERT_EQ(o.status, 0);
  const nlohmann::json j = nlohmann::json::parse(o.output);
  EXPECT_EQ(j["ops"][0]["variants"].size(), 4u);
  bool scalar = false;
  for (const auto& t : j["targets"]) scalar |= t["name"] == "SCALAR" && t["supported"] == true;
  EXPECT_TRUE(scalar);
}

}  // namespace
