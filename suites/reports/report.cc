#include "suites/reports/report.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string_view>

#include <unistd.h>

#include "oracles/float_text.h"
#include "suites/reports/replay.h"

namespace ulpgate {

const char* ToolVersion() { return "ulpgate " ULPGATE_VERSION; }

nlohmann::ordered_json InputJson(const InputSet& inputs, uint64_t index) {
  nlohmann::ordered_json j;
  j["index"] = index;
  nlohmann::ordered_json bits;
  for (size_t k = 0; k < inputs.operand_names.size(); ++k) {
    const float x = inputs.columns[k][index];
    j[inputs.operand_names[k]] = HexFloat(x);
    bits[inputs.operand_names[k]] = BitsHex(x);
  }
  j["bits"] = bits;
  return j;
}

std::string DigestHex(uint64_t digest) {
  char buffer[24];
  std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(digest));
  return buffer;
}

namespace {

// "conformance": the model matched (null if none), the expected one, the
// mismatches against it, every model matched, and the first mismatching
// input described by `describe`.
template <class Describe>
nlohmann::ordered_json ConformanceJson(const Conformance& c, Describe describe) {
  const std::string model = c.model();
  nlohmann::ordered_json j = {
      {"model", model.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(model)},
      {"expected", c.expected_model},
      {"mismatches", c.mismatches},
      {"matching", c.matching},
  };
  if (c.first_mismatch_index >= 0) j["first_mismatch_input"] = describe(c.first_mismatch_index);
  return j;
}

// {"intermediate_overflow": {"count": n, "first_input": {...}}, ...}: the
// causes with any special mismatch, in SpecialCause order; their counts add
// up to "special_mismatch".
template <class Describe>
nlohmann::ordered_json SpecialCausesJson(const ErrorStatistics& s, Describe describe) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (int k = 0; k < kSpecialCauseCount; ++k) {
    const SpecialCauseCount& cause = s.special_causes()[k];
    if (cause.count == 0) continue;
    j[SpecialCauseKey(SpecialCauseAt(k))] = {{"count", cause.count},
                                             {"first_input", describe(cause.first_index)}};
  }
  return j;
}

}  // namespace

nlohmann::ordered_json ReductionElementJson(const ReductionInputSet& inputs, uint64_t index) {
  const size_t per_instance = inputs.outputs_per_instance();
  const size_t instance = index / per_instance, element = index % per_instance;
  nlohmann::ordered_json j;
  j["index"] = index;
  j["instance"] = inputs.instances.at(instance).index;
  j["element"] = ElementIndices(*inputs.op, inputs.shape, element);
  j["name"] = ElementName(*inputs.op, inputs.shape, element);
  return j;
}

nlohmann::ordered_json CaseJson(const CaseResult& r, const DescribeInput& describe) {
  const ErrorStatistics& s = r.stats;
  auto input = [&](int64_t index) {
    return index >= 0 ? describe(static_cast<uint64_t>(index)) : nlohmann::ordered_json();
  };
  nlohmann::ordered_json j;
  j["op"] = r.op;
  j["variant"] = r.variant;
  j["target"] = r.target;
  j["kind"] = CaseKindName(r.kind);
  AddSourceJson(r.source, j);  // "plugin" or "iut", for a plugin's or an IUT's kernel
  j["dtype"] = r.dtype;
  j["suite"] = r.suite;
  j["seed"] = r.seed;
  if (r.instances > 0) {
    j["shape"] = r.shape;
    j["instances"] = r.instances;
  }
  j["n"] = r.n;
  if (r.fault) {
    // A faulted case was not measured: its statistics stop at the fault, so
    // no measurement field is written (not even zeros) and every reader sees
    // the fault alone.
    const KernelFault& f = *r.fault;
    j["fault"] = {{"kind", KernelFaultKey(f.kind)},
                  {"detail", f.detail},
                  {"input", input(f.index)},
                  {"call_first", f.first},
                  {"call_count", f.count}};
    return j;
  }
  j["histogram"] = {{"bounds", s.bounds()}, {"counts", s.counts()}};
  j["special_mismatch"] = s.special_mismatch();
  j["signed_zero_mismatch"] = s.signed_zero_mismatch();
  j["max_ulp"] = s.max_ulp();
  j["max_input"] = input(s.max_index());
  j["mean_ulp"] = s.mean_ulp();
  j["percentiles"] = {{"50", s.Percentile(50)},
                      {"90", s.Percentile(90)},
                      {"99", s.Percentile(99)},
                      {"99.9", s.Percentile(99.9)}};
  j["correctly_rounded"] = s.correctly_rounded();
  if (s.first_special_index() >= 0) {
    j["first_special_mismatch_input"] = input(s.first_special_index());
    j["special_mismatch_causes"] = SpecialCausesJson(s, input);
  }
  if (s.first_signed_zero_index() >= 0) {
    j["first_signed_zero_input"] = input(s.first_signed_zero_index());
  }
  if (r.bounded) {
    const BoundFractionStatistics& b = r.bound;
    j["bound_fraction"] = {
        {"histogram", {{"bounds", b.bounds()}, {"counts", b.counts()}}},
        {"max", std::isinf(b.max_fraction()) ? nlohmann::ordered_json("inf")
                                              : nlohmann::ordered_json(b.max_fraction())},
        {"max_input", input(b.max_index())},
        {"above_one", b.above_one()},
        {"overflow_exempt", b.overflow_exempt()},
    };
    if (b.first_above_one_index() >= 0) {
      j["bound_fraction"]["first_above_one_input"] = input(b.first_above_one_index());
    }
  }
  if (r.kind == CaseKind::kPeer) {
    j["conformance"] = nullptr;
  } else {
    j["conformance"] = ConformanceJson(r.conformance, input);
  }
  j["output_digest"] = DigestHex(r.output_digest);
  if (!r.map_operand.empty()) {
    nlohmann::ordered_json buckets = nlohmann::ordered_json::array();
    for (const auto& [bucket, b] : r.error_map) {
      nlohmann::ordered_json bj;
      bj["binade"] = BinadeLabel(bucket);
      bj["n"] = b.n;
      bj["max_ulp"] = b.max_ulp;
      bj["mean_ulp"] = b.mean_ulp();
      bj["above_1_ulp"] = b.above_one_ulp;
      bj["correctly_rounded"] = b.correctly_rounded;
      bj["special_mismatch"] = b.special_mismatch;
      bj["max_input"] = input(b.max_index);
      buckets.push_back(bj);
    }
    j["error_map"] = {{"operand", r.map_operand}, {"buckets", buckets}};
  }
  return j;
}

nlohmann::ordered_json CaseJson(const CaseResult& r, const InputSet& inputs) {
  nlohmann::ordered_json j = CaseJson(r, [&](uint64_t i) { return InputJson(inputs, i); });
  // The commands that compute the case's kernel (or model) again on each
  // input the record names.
  if (r.kind != CaseKind::kKernel && r.kind != CaseKind::kModel) return j;
  const ReplayKernel kernel = ReplayKernelOf(r);
  nlohmann::ordered_json reproduce = nlohmann::ordered_json::object();
  auto add = [&](const char* key, int64_t index) {
    if (index < 0 || static_cast<uint64_t>(index) >= inputs.size()) return;
    std::vector<float> operands;
    for (const auto& column : inputs.columns) operands.push_back(column[static_cast<size_t>(index)]);
    reproduce[key] = ReplayInputCommand(kernel, inputs.operand_names, operands);
  };
  if (r.fault) add("fault_input", r.fault->index >= 0 ? r.fault->index : r.fault->first);
  add("max_input", r.stats.max_index());
  add("first_mismatch_input", r.conformance.first_mismatch_index);
  add("first_special_mismatch_input", r.stats.first_special_index());
  if (!reproduce.empty()) j["reproduce"] = reproduce;
  return j;
}

nlohmann::ordered_json CaseJson(const CaseResult& r, const ReductionInputSet& inputs) {
  return CaseJson(r, [&](uint64_t i) { return ReductionElementJson(inputs, i); });
}

std::string FaultText(const nlohmann::ordered_json& record) {
  const auto it = record.find("fault");
  if (it == record.end() || !it->is_object()) return "";
  const nlohmann::ordered_json& f = *it;
  std::string name = f.value("kind", std::string("fault"));
  for (KernelFaultKind kind : {KernelFaultKind::kCrashed, KernelFaultKind::kTimeout,
                               KernelFaultKind::kOutOfBounds, KernelFaultKind::kRefused}) {
    if (name == KernelFaultKey(kind)) name = KernelFaultName(kind);
  }
  std::string text = name;
  if (f.contains("detail") && f["detail"].is_string()) text += " (" + f["detail"].get<std::string>() + ")";
  const auto input = f.find("input");
  if (input != f.end() && input->is_object() && input->contains("index")) {
    text += " at input #" + input->at("index").dump();
  } else if (f.contains("call_first") && f.contains("call_count")) {
    const int64_t first = f["call_first"].get<int64_t>(), count = f["call_count"].get<int64_t>();
    text += " on a call of inputs #" + std::to_string(first) + " to #" +
            std::to_string(first + std::max<int64_t>(count, 1) - 1);
  }
  return text;
}

void WriteJsonFile(const std::string& path, const nlohmann::ordered_json& json,
                   const char* failpoint) {
  WriteTextFile(path, json.dump(2) + '\n', failpoint);
}

void WriteTextFile(const std::string& path, const std::string& text, const char* failpoint) {
  const std::string temporary = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(temporary, std::ios::trunc | std::ios::binary);
    if (!out) throw std::runtime_error(path + ": cannot open for writing");
    out << text;
    out.flush();
    if (!out) {
      std::remove(temporary.c_str());
      throw std::runtime_error(path + ": write failed");
    }
  }
  const char* armed = failpoint != nullptr ? std::getenv("ULPGATE_FAILPOINT") : nullptr;
  if (armed != nullptr && std::strcmp(armed, failpoint) == 0) ::_exit(3);
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    throw std::runtime_error(path + ": cannot replace the file");
  }
}

std::string ShellWord(const std::string& word) {
  const bool plain = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string_view("_-+.,/:=@%^").find(c) != std::string_view::npos;
  });
  if (plain) return word;
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

}  // namespace ulpgate
