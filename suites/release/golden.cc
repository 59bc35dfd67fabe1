#include "suites/release/golden.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <mutex>
#include <array>
#include <filesystem>
#include <map>

#include "kernels/cast.h"
#include "oracles/float_text.h"
#include "oracles/format.h"
#include "suites/engine/block_quant_cases.h"
#include "suites/engine/cast_cases.h"
#include "suites/inputs/cast_suites.h"
#include "suites/engine/digest.h"
#include "suites/engine/elementwise_oracle.h"
#include "suites/drift/kernels.h"
#include "suites/drift/run.h"
#include "suites/inputs/inputs.h"
#include "suites/reports/json_file.h"
#include "suites/engine/plugins.h"
#include "suites/inputs/reduction_problem.h"
#include "suites/release/gate.h"
#include "suites/reports/report.h"

namespace ulpgate {
namespace {

using Json = nlohmann::ordered_json;

constexpr size_t kOutputsPerLine = 16;
constexpr size_t kLossEvery = 10;  // drift: the loss of every 10th epoch and of the last
constexpr size_t kOutputChangesShown = 5;
constexpr uint64_t kDriftEpochs = 200;

bool IsReduction(const std::string& op) { return FamilyOf(op) == OpFamily::kReduction; }
bool IsDrift(const std::string& op) { return FamilyOf(op) == OpFamily::kDrift; }
bool IsCast(const std::string& op) { return FamilyOf(op) == OpFamily::kCast; }
bool IsBlockQuant(const std::string& op) { return FamilyOf(op) == OpFamily::kBlockQuant; }
// Ops whose outputs are codes of a byte: casts, block quantizers (scales
// then element codes).
bool HasCodes(const std::string& op) { return IsCast(op) || IsBlockQuant(op); }

// A cast's codes, 32 a line, two hex digits each.
constexpr size_t kCodesPerLine = 32;

bool Contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::string Joined(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

// Outputs as text: lines of 16 bit patterns, 8 hex digits each, so a review
// diff shows which outputs moved.
Json OutputLines(const std::vector<float>& outputs) {
  Json lines = Json::array();
  for (size_t i = 0; i < outputs.size(); i += kOutputsPerLine) {
    std::string line;
    for (size_t k = i; k < std::min(outputs.size(), i + kOutputsPerLine); ++k) {
      line += fmt::format("{}{:08x}", k == i ? "" : " ", FloatBits(outputs[k]));
    }
    lines.push_back(line);
  }
  return lines;
}

Json CodeLines(const std::vector<uint8_t>& codes) {
  Json lines = Json::array();
  for (size_t i = 0; i < codes.size(); i += kCodesPerLine) {
    std::string line;
    for (size_t k = i; k < std::min(codes.size(), i + kCodesPerLine); ++k) {
      line += fmt::format("{}{:02x}", k == i ? "" : " ", codes[k]);
    }
    lines.push_back(line);
  }
  return lines;
}

// `digits`: 8 for binary32 bit patterns, 2 for a cast's codes.
std::vector<uint32_t> DecodeOutputs(const JsonField& lines, size_t digits = 8) {
  std::vector<uint32_t> bits;
  for (size_t i = 0; i < lines.Size(); ++i) {
    const std::string line = lines[i].String();
    size_t at = 0;
    while (at < line.size()) {
      const size_t end = std::min(line.find(' ', at), line.size());
      const std::string word = line.substr(at, end - at);
      if (word.size() != digits || word.find_first_not_of("0123456789abcdef") != std::string::npos) {
        lines[i].Fail(fmt::format("expected {} of {} lower-case hex digits separated by "
                                  "single spaces, found '{}'", digits == 8 ? "bit patterns" : "codes",
                                  digits, word));
      }
      bits.push_back(static_cast<uint32_t>(std::stoul(word, nullptr, 16)));
      at = end + 1;
    }
  }
  return bits;
}

Json LossSamples(const std::vector<float>& loss) {
  Json samples = Json::object();
  for (size_t e = 0; e < loss.size(); ++e) {
    if (e % kLossEvery == 0 || e + 1 == loss.size()) samples[std::to_string(e)] = HexFloat(loss[e]);
  }
  return samples;
}

// {"0": 3, "(0, 0.5]": 500, "(0.5, 1]": 9}: the non-empty bins of a
// histogram, named by their bounds (in ULP or bound fractions), so a review
// diff reads as "12 more results in (0.5, 1]".
Json SparseHistogram(const Json& histogram) {
  const Json& bounds = histogram["bounds"];
  const Json& counts = histogram["counts"];
  auto b = [&](size_t i) { return fmt::format("{}", bounds[i].get<double>()); };
  Json bins = Json::object();
  for (size_t i = 0; i < counts.size(); ++i) {
    if (counts[i].get<uint64_t>() == 0) continue;
    const std::string label = i == 0                ? b(0)
                              : i >= bounds.size() ? "> " + b(bounds.size() - 1)
                                                   : fmt::format("({}, {}]", b(i - 1), b(i));
    bins[label] = counts[i];
  }
  return bins;
}

std::string SizeText(const std::string& op, const Json& c) {
  if (IsDrift(op)) return fmt::format("epochs {}", c["epochs"].get<uint64_t>());
  if (IsReduction(op)) {
    return fmt::format("seed {} shape {} instances {}", c["seed"].get<uint64_t>(),
                       c["shape"].get<std::string>(), c["instances"].get<uint64_t>());
  }
  return fmt::format("seed {} n {}", c["seed"].get<uint64_t>(), c["n"].get<uint64_t>());
}

// The format shows only when it is not f32, so binary32 labels stay as they were.
std::string Label(const std::string& op, const std::string& variant, const std::string& target,
                  const std::string& dtype, const std::string& suite, const std::string& size) {
  return fmt::format("{} {} {}{} {} {} {}", op, variant, target,
                     dtype == "f32" ? "" : " " + dtype, GetOp(op).suite_word(),
                     suite, size);
}

// The fields of a golden case, in the order they are written.
std::vector<std::string> CaseKeys(const std::string& op) {
  if (IsDrift(op)) {
    return {"op",       "variant", "target",  "dtype",  "suite", "epochs", "summary",
            "in_situ", "final_parameters_digest", "loss_digest", "loss"};
  }
  if (IsBlockQuant(op)) {
    return {"op", "variant", "target", "dtype", "suite", "seed", "n", "blocks", "conformance",
            "first_mismatches", "output_digest", "outputs"};
  }
  if (IsCast(op)) {
    return {"op",       "variant",          "target",   "dtype",  "suite",     "seed",
            "n",        "conformance",      "first_mismatches", "followed", "in_range",
            "max_ulp",  "max_input",        "correctly_rounded", "special_mismatch",
            "output_digest", "outputs"};
  }
  std::vector<std::string> keys = {"op", "variant", "target", "dtype", "suite", "seed"};
  if (IsReduction(op)) keys.insert(keys.end(), {"shape", "instances"});
  keys.insert(keys.end(), {"n", "histogram", "special_mismatch", "signed_zero_mismatch", "max_ulp",
                           "max_input", "mean_ulp", "correctly_rounded", "conformance"});
  if (IsReduction(op)) keys.emplace_back("bound_fraction");
  keys.insert(keys.end(), {"output_digest", "outputs"});
  return keys;
}

// ---- validation ----

void RequireObjectOrNull(const JsonField& f) {
  if (!f.json().is_null()) f.RequireObject();
}

void RequireHistogram(const JsonField& f) {
  f.RequireObject();
  for (const auto& [bin, count] : f.json().items()) f[bin].Unsigned();
}

void RequireDigest(const JsonField& f) {
  const std::string d = f.String();
  if (d.size() != 16 || d.find_first_not_of("0123456789abcdef") != std::string::npos) {
    f.Fail("expected a digest of 16 lower-case hex digits, found '" + d + "'");
  }
}

// Numbers (or flags, such as a drift summary's "stalled"), and arrays of objects.
void RequireNumbers(const JsonField& f) {
  f.RequireObject();
  for (const auto& [key, value] : f.json().items()) {
    if (value.is_array()) {
      for (size_t i = 0; i < value.size(); ++i) f[key][i].RequireObject();
    } else if (!value.is_null() && !value.is_boolean()) {
      f[key].Number();
    }
  }
}

void RequireOneOf(const JsonField& f, const std::vector<std::string>& known, const char* what) {
  const std::string name = f.String();
  if (!Contains(known, name)) f.Fail(fmt::format("unknown {} '{}' ({})", what, name, Joined(known)));
}

void ValidateCase(const JsonField& c, const std::string& op, const TargetInfo& target) {
  c.OnlyKeys(CaseKeys(op));
  for (const std::string& key : CaseKeys(op)) c[key];  // every field present
  if (c["op"].String() != op) c["op"].Fail("expected \"" + op + "\", the op of the file");
  RequireOneOf(c["dtype"], MeasurableDtypes(op), ("format of " + op).c_str());
  if (IsDrift(op)) {
    const std::string spec = c["variant"].String();
    try {
      ParseRunConfig(spec, &target, ParseDriftPrecision(c["dtype"].String()));
    } catch (const InputError& e) {
      c["variant"].Fail(e.what());
    }
  }
  if (IsPluginTarget(target)) {
    RequireOneOf(c["variant"], PluginVariants({&target}, op, c["dtype"].String()),
                 ("kernel of plugin " + target.name).c_str());
  } else if (!IsDrift(op)) {
    RequireOneOf(c["variant"], MeasurableVariants(op, c["dtype"].String()),
                 ("variant of " + op + " in " + c["dtype"].String()).c_str());
  }
  if (c["target"].String() != target.name) {
    c["target"].Fail("expected \"" + target.name + "\", the target of the file");
  }
  RequireOneOf(c["suite"], MeasurableSuites(op), GetOp(op).suite_word().c_str());
  if (IsDrift(op)) {
    const uint64_t epochs = c["epochs"].Unsigned();
    RequireNumbers(c["summary"]);
    c["in_situ"].RequireObject();
    for (const auto& [name, value] : c["in_situ"].json().items()) {
      const JsonField s = c["in_situ"][name];
      s.OnlyKeys({"calls", "max_ulp", "mean_ulp", "special_mismatch", "correctly_rounded"});
      s["calls"].Unsigned();
      s["max_ulp"].Number();
      s["mean_ulp"].Number();
      s["special_mismatch"].Unsigned();
      s["correctly_rounded"].Unsigned();
    }
    RequireDigest(c["final_parameters_digest"]);
    RequireDigest(c["loss_digest"]);
    c["loss"].RequireObject();
    for (const auto& [epoch, value] : c["loss"].json().items()) {
      const JsonField loss = c["loss"][epoch];
      // At most 19 digits fit an unsigned 64-bit number: longer keys are out of
      // range, not a reason to throw something other than the file's error.
      if (epoch.empty() || epoch.size() > 19 ||
          epoch.find_first_not_of("0123456789") != std::string::npos ||
          std::stoull(epoch) >= epochs) {
        loss.Fail(fmt::format("expected an epoch number below {} as the key", epochs));
      }
      std::string error;
      if (!ParseFloat(loss.String(), &error)) loss.Fail("expected a hex float: " + error);
    }
    return;
  }
  c["seed"].Unsigned();
  if (IsBlockQuant(op)) {
    c["n"].Unsigned();
    const uint64_t blocks = c["blocks"].Unsigned();
    const JsonField conformance = c["conformance"];
    conformance.OnlyKeys({"model", "expected", "mismatches"});
    if (!conformance["model"].json().is_null()) conformance["model"].String();
    conformance["expected"].String();
    conformance["mismatches"].Unsigned();
    c["first_mismatches"].Strings();
    RequireDigest(c["output_digest"]);
    const size_t outputs = DecodeOutputs(c["outputs"], 2).size();
    const uint64_t want = blocks + c["n"].Unsigned() * kBlockQuantCols;
    if (outputs != want) {
      c["outputs"].Fail(fmt::format("expected {} codes (scales, then elements), found {}", want, outputs));
    }
    return;
  }
  if (IsCast(op)) {
    const uint64_t n = c["n"].Unsigned();
    const JsonField conformance = c["conformance"];
    conformance.OnlyKeys({"model", "expected", "mismatches"});
    if (!conformance["model"].json().is_null()) conformance["model"].String();
    conformance["expected"].String();
    conformance["mismatches"].Unsigned();
    for (size_t i = 0; i < c["first_mismatches"].Size(); ++i) {
      c["first_mismatches"][i].String();
    }
    c["followed"].Strings();
    c["in_range"].Unsigned();
    c["max_ulp"].Number();
    RequireObjectOrNull(c["max_input"]);
    c["correctly_rounded"].Unsigned();
    c["special_mismatch"].Unsigned();
    RequireDigest(c["output_digest"]);
    const size_t outputs = DecodeOutputs(c["outputs"], 2).size();
    if (outputs != n) c["outputs"].Fail(fmt::format("expected {} codes (n), found {}", n, outputs));
    return;
  }
  if (IsReduction(op)) {
    try {
      ParseShape(*FindReductionOp(op), c["shape"].String());
    } catch (const InputError& e) {
      c["shape"].Fail(e.what());
    }
    c["instances"].Unsigned();
  }
  const uint64_t n = c["n"].Unsigned();
  RequireHistogram(c["histogram"]);
  c["special_mismatch"].Unsigned();
  c["signed_zero_mismatch"].Unsigned();
  c["max_ulp"].Number();
  RequireObjectOrNull(c["max_input"]);
  c["mean_ulp"].Number();
  c["correctly_rounded"].Unsigned();
  const JsonField conformance = c["conformance"];
  conformance.OnlyKeys({"model", "expected", "mismatches"});
  if (!conformance["model"].json().is_null()) conformance["model"].String();
  conformance["expected"].String();
  conformance["mismatches"].Unsigned();
  if (IsReduction(op)) {
    const JsonField b = c["bound_fraction"];
    b.OnlyKeys({"histogram", "max", "max_input", "above_one", "overflow_exempt"});
    RequireHistogram(b["histogram"]);
    if (b["max"].json() != "inf") b["max"].Number();
    RequireObjectOrNull(b["max_input"]);
    b["above_one"].Unsigned();
    b["overflow_exempt"].Unsigned();
  }
  RequireDigest(c["output_digest"]);
  const size_t outputs = DecodeOutputs(c["outputs"]).size();
  if (outputs != n) c["outputs"].Fail(fmt::format("expected {} outputs (n), found {}", n, outputs));
}

// ---- comparison ----

// Every scalar of a case but its outputs, as (name, text): "max_ulp",
// "conformance.model", "histogram (0.5, 1]".
void Flatten(const Json& j, const std::string& name,
             std::vector<std::pair<std::string, std::string>>& out) {
  const bool histogram = name.size() >= 9 && name.compare(name.size() - 9, 9, "histogram") == 0;
  if (j.is_object()) {
    for (const auto& [key, value] : j.items()) {
      if (name.empty() && (key == "outputs" || key == "loss")) continue;
      Flatten(value, name.empty() ? key : name + (histogram ? " " : ".") + key, out);
    }
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) Flatten(j[i], fmt::format("{}[{}]", name, i), out);
  } else {
    out.emplace_back(name, j.is_string() ? j.get<std::string>() : j.dump());
  }
}

CaseDifference CompareCase(const Json& old_case, const Json& new_case,
                           const DescribeOutput& describe, const std::string& path) {
  CaseDifference d;
  d.label = GoldenCaseLabel(new_case);
  std::vector<std::pair<std::string, std::string>> old_fields, new_fields;
  Flatten(old_case, "", old_fields);
  Flatten(new_case, "", new_fields);
  // A histogram bin absent from one side is an empty bin.
  auto absent = [](const std::string& name) {
    return name.find("histogram ") != std::string::npos ? "0" : "(absent)";
  };
  const std::map<std::string, std::string> old_map(old_fields.begin(), old_fields.end());
  const std::map<std::string, std::string> new_map(new_fields.begin(), new_fields.end());
  for (const auto& [name, value] : new_fields) {
    const auto it = old_map.find(name);
    const std::string old_value = it == old_map.end() ? absent(name) : it->second;
    if (old_value != value) d.fields.push_back({name, old_value, value});
  }
  for (const auto& [name, value] : old_fields) {
    if (new_map.count(name) == 0) d.fields.push_back({name, value, absent(name)});
  }
  // Keep each changed field with its group ("histogram (2, 4]" that only the
  // old case has beside the other histogram bins), in the new case's order.
  auto group = [](const std::string& name) { return name.substr(0, name.find_first_of(" .[")); };
  auto rank = [&](const FieldChange& f) {
    for (size_t i = 0; i < new_fields.size(); ++i) {
      if (group(new_fields[i].first) == group(f.field)) return i;
    }
    return new_fields.size();
  };
  std::stable_sort(d.fields.begin(), d.fields.end(),
                   [&](const FieldChange& a, const FieldChange& b) { return rank(a) < rank(b); });
  auto add_output = [&](uint64_t index, uint32_t old_bits, uint32_t new_bits) {
    ++d.outputs_differing;
    if (d.outputs.size() < kOutputChangesShown) {
      d.outputs.push_back({index, describe ? describe(index) : Json(), old_bits, new_bits, {}, {}});
    }
  };
  if (IsDrift(new_case["op"])) {
    for (const auto& [epoch, value] : new_case["loss"].items()) {
      const uint32_t new_bits = FloatBits(*ParseFloat(value.get<std::string>()));
      const auto it = old_case["loss"].find(epoch);
      if (it == old_case["loss"].end()) continue;  // a different epoch count shows as a field
      const uint32_t old_bits = FloatBits(*ParseFloat(it->get<std::string>()));
      if (old_bits != new_bits) add_output(std::stoull(epoch), old_bits, new_bits);
    }
  } else {
    const std::string op = new_case["op"];
    const size_t digits = HasCodes(op) ? 2 : 8;
    const std::vector<uint32_t> old_bits =
        DecodeOutputs(JsonField(path, "", old_case["outputs"]), digits);
    const std::vector<uint32_t> new_bits =
        DecodeOutputs(JsonField(path, "", new_case["outputs"]), digits);
    for (size_t i = 0; i < std::min(old_bits.size(), new_bits.size()); ++i) {
      if (old_bits[i] != new_bits[i]) add_output(i, old_bits[i], new_bits[i]);
    }
    if (IsBlockQuant(op) && d.outputs_differing > 0) {
      for (OutputChange& o : d.outputs) {
        o.old_text = fmt::format("0x{:02x}", o.old_bits);
        o.new_text = fmt::format("0x{:02x}", o.new_bits);
      }
      d.replay = fmt::format("ulpgate run --op {} --dtype {} --variant {} --target {} --seed {} --n {}",
                             op, new_case["dtype"].get<std::string>(),
                             new_case["variant"].get<std::string>(),
                             new_case["target"].get<std::string>(), new_case["seed"].dump(),
                             new_case["n"].dump());
    }
    if (IsCast(op) && d.outputs_differing > 0) {
      // Codes are named in the destination's format; the case runs again as
      // `run` runs it.
      const FloatFormat& to = *FindFormat(new_case["dtype"].get<std::string>());
      for (OutputChange& o : d.outputs) {
        o.old_text = CastCodeText(to, o.old_bits);
        o.new_text = CastCodeText(to, o.new_bits);
      }
      d.replay = fmt::format("ulpgate run --op {} --dtype {} --variant {} --target {} --suite {} "
                             "--seed {} --n {}",
                             op, new_case["dtype"].get<std::string>(),
                             new_case["variant"].get<std::string>(),
                             new_case["target"].get<std::string>(),
                             new_case["suite"].get<std::string>(), new_case["seed"].dump(),
                             new_case["n"].dump());
    }
  }
  return d;
}

// ---- sweeps ----

constexpr uint64_t kGoldenSweepBegin = 0x3f000000, kGoldenSweepEnd = 0x40000000;
constexpr float kGoldenSweepFixed = 1.3f;

std::array<std::string, 2> SweptOperands(const ElementwiseOpInfo& op) {
  const std::vector<std::string> names = op.operand_names();
  return {names.at(0), names.at(1)};
}

// The ops whose goldens hold sweeps: elementwise ops of two operands.
const ElementwiseOpInfo* SweptOp(const std::string& op) {
  const ElementwiseOpInfo* info = FindElementwiseOp(op);
  return info != nullptr && info->arity() == 2 ? info : nullptr;
}

SweepDomain GoldenSweepDomain(const ElementwiseOpInfo& op, const FloatFormat& format) {
  if (format.bits == 32) {
    return MakeSweepDomain(format, SweepDomain::Kind::kOverT, {kGoldenSweepFixed},
                           SweptOperands(op));
  }
  return MakeSweepDomain(format, SweepDomain::Kind::kPairs, {}, SweptOperands(op));
}

Json GoldenSweepJson(const GoldenSweep& sweep, const std::string& model, uint64_t digest) {
  Json fixed = Json::array();
  for (float f : sweep.domain.fixed) fixed.push_back(HexFloat(f));
  return {{"variant", sweep.variant},
          {"dtype", sweep.dtype},
          {"domain", sweep.domain.KindName()},
          {"fixed", fixed},
          {"range", {fmt::format("{:#010x}", sweep.begin), fmt::format("{:#010x}", sweep.end)}},
          {"model", model},
          {"digest", DigestHex(digest)}};
}

uint64_t ParseHexIndex(const JsonField& f) {
  const std::string text = f.String();
  if (text.size() < 3 || text.size() > 18 || text.compare(0, 2, "0x") != 0 ||
      text.find_first_not_of("0123456789abcdef", 2) != std::string::npos) {
    f.Fail("expected an index in hex (0x...), found '" + text + "'");
  }
  return std::stoull(text.substr(2), nullptr, 16);
}

// A recorded sweep entry, validated; the op must be a swept one.
GoldenSweep ParseGoldenSweep(const JsonField& s, const ElementwiseOpInfo& op) {
  s.OnlyKeys({"variant", "dtype", "domain", "fixed", "range", "model", "digest"});
  GoldenSweep sweep;
  sweep.dtype = s["dtype"].String();
  RequireOneOf(s["dtype"], MeasurableDtypes(std::string(op.name)), "format");
  const FloatFormat& format = *FindFormat(sweep.dtype);
  sweep.variant = s["variant"].String();
  RequireOneOf(s["variant"], MeasurableVariants(std::string(op.name), sweep.dtype), "variant");
  sweep.domain = ParseSweepDomain(s["domain"], s["fixed"], format, SweptOperands(op));
  if (s["range"].Size() != 2) s["range"].Fail("expected [begin, end]");
  sweep.begin = ParseHexIndex(s["range"][0]);
  sweep.end = ParseHexIndex(s["range"][1]);
  if (sweep.begin > sweep.end || sweep.end > sweep.domain.size()) {
    s["range"].Fail("expected begin <= end within the domain");
  }
  s["model"].String();
  RequireDigest(s["digest"]);
  return sweep;
}

// The model digests bless computes, shared by the targets whose kernels
// follow the same model.
uint64_t CachedModelDigest(const SweepDigestOptions& o, size_t model, const std::string& key) {
  static std::mutex mutex;
  static std::map<std::string, uint64_t> cache;
  {
    const std::lock_guard<std::mutex> lock(mutex);
    const auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  const uint64_t digest = SweepModelDigest(o, model);
  const std::lock_guard<std::mutex> lock(mutex);
  cache[key] = digest;
  return digest;
}

size_t ModelIndex(const ElementwiseOpInfo& op, const FloatFormat& format, const std::string& name) {
  const std::vector<std::string> names = ModelNames(op, format);
  const auto it = std::find(names.begin(), names.end(), name);
  if (it == names.end()) throw std::logic_error("no model " + name + " of " + std::string(op.name));
  return static_cast<size_t>(it - names.begin());
}

// The sweeps of a golden file (see MeasureGolden).
Json MeasureSweeps(const ElementwiseOpInfo& op, const TargetInfo& target, unsigned threads,
                   GoldenSource source, const GoldenFile* recorded, GoldenFile* file,
                   const std::vector<MeasureSpec>* specs = nullptr) {
  std::vector<GoldenSweep> plan;
  std::vector<const Json*> recorded_entries;
  const std::string op_name(op.name);
  if (recorded != nullptr && recorded->json.contains("sweeps")) {
    const Json& entries = recorded->json["sweeps"];
    for (size_t i = 0; i < entries.size(); ++i) {
      plan.push_back(ParseGoldenSweep(
          JsonField(recorded->path, fmt::format("/sweeps/{}", i), entries[i]), op));
      recorded_entries.push_back(&entries[i]);
    }
  } else {
    // The (variant, dtype) pairs the measured cases have.
    for (const GoldenSweep& sweep : GoldenSweepPlan(op_name)) {
      const bool measured =
          specs == nullptr ||
          std::any_of(specs->begin(), specs->end(), [&](const MeasureSpec& spec) {
            return spec.dtype == sweep.dtype && Contains(spec.variants, sweep.variant);
          });
      if (measured) plan.push_back(sweep);
    }
    recorded_entries.assign(plan.size(), nullptr);
  }
  Json sweeps = Json::array();
  for (size_t i = 0; i < plan.size(); ++i) {
    const GoldenSweep& sweep = plan[i];
    const FloatFormat& format = *sweep.domain.format;
    const std::string model = ExpectedModel(op, format, sweep.variant, target);
    SweepDigestOptions o;
    o.op = &op;
    o.domain = sweep.domain;
    o.begin = sweep.begin;
    o.end = sweep.end;
    o.threads = threads;
    const Json* old = recorded_entries[i];
    const ElementwiseKernel kernel =
        FindElementwiseKernel(op.name, sweep.dtype, sweep.variant, target.bits);
    uint64_t digest = 0;
    if (source == GoldenSource::kKernels && target.supported && kernel != nullptr) {
      digest = SweepKernelDigest(o, kernel);
      ++file->sweeps_run;
      const Json entry = GoldenSweepJson(sweep, model, digest);
      if (old != nullptr && (*old)["digest"] != entry["digest"]) {
        const std::optional<SweepDifference> first =
            FirstSweepDifference(o, kernel, ModelIndex(op, format, model));
        if (first) {
          file->sweep_differences[GoldenSweepLabel(op_name, target.name, entry)] = {
              first->index, SweepInputJson(sweep.domain, first->index), FloatBits(first->model),
              FloatBits(first->kernel), {}, {}};
        }
      }
      sweeps.push_back(entry);
      continue;
    }
    if (source == GoldenSource::kKernels && old != nullptr) {
      // Not run here: the recorded digest stands (the model was checked on
      // the sampled cases).
      sweeps.push_back(*old);
      continue;
    }
    const std::string key = fmt::format("{} {} {} {} {}:{}", op_name, sweep.dtype, model,
                                        sweep.domain.Description(), sweep.begin, sweep.end);
    digest = CachedModelDigest(o, ModelIndex(op, format, model), key);
    sweeps.push_back(GoldenSweepJson(sweep, model, digest));
  }
  return sweeps;
}

}  // namespace

std::vector<MeasureSpec> GoldenPlan(const std::string& op) {
  std::vector<MeasureSpec> plan;
  for (const std::string& dtype : MeasurableDtypes(op)) {
    for (const std::string& suite : MeasurableSuites(op)) {
      MeasureSpec spec;
      spec.op = op;
      spec.dtype = dtype;
      spec.suite = suite;
      spec.seed = 1;
      spec.variants = MeasurableVariants(op, dtype);
      if (FamilyOf(op) == OpFamily::kElementwise) {
        // Adversarial: the 23 x 23 special pairs (529) and about 70 of each of
        // its seven families (near +-1, near 1/sqrt 2, ties, overflow, ...).
        // n is odd, so that a run's inputs end in a tail of every lane count
        // (the engine's call plan leaves tails of every length besides).
        spec.n = suite == "adversarial" ? 1027 : 515;
      } else if (IsBlockQuant(op)) {
        // 17 rows of 64: 34 MX blocks (68 NVFP4 ones), the rules' parting
        // amaxes among them.
        spec.n = 17;
      } else if (IsCast(op)) {
        // The boundary suite is its whole list (about 3,000 inputs: every
        // midpoint, tie and threshold of the destination, where casts go
        // wrong); random and scaled a few hundred each, odd so that the
        // kernels end in a tail.
        spec.n = suite == "boundary"
                     ? GenerateCastSuite(*CastOpSource(op), *FindCastDestination(dtype), suite, 1, 0).size()
                     : 257;
      } else if (IsDrift(op)) {
        // One run per variant of the tanh layer's op plus the fully fused run.
        // 200 epochs, not the scenarios' 1000: the exact shadow run dominates
        // the cost, and 200 epochs already carry every kernel through
        // thousands of calls.
        spec.variants.emplace_back(fmt::format("{}={},sgd=fused", kDriftTanhBwd,
                                               dtype == kBinary32.name ? "mulsub_fma"
                                                                       : "mulsub_fma_opmath"));
        spec.n = kDriftEpochs;
      } else {
        // The op's golden shape (its spec's: odd extents, so that every lane
        // width leaves a tail); each instance starts at another offset from a
        // 64-byte boundary.
        const ReductionOpInfo& reduction = *FindReductionOp(op);
        spec.shape = ShapeText(reduction, reduction.golden_shape);
        spec.n = reduction.golden_instances;
      }
      plan.push_back(std::move(spec));
    }
  }
  return plan;
}

std::string GoldenPath(const std::string& dir, const std::string& target, const std::string& op) {
  return (std::filesystem::path(dir) / target / (op + ".json")).string();
}

Json GoldenCaseJson(const MeasuredCase& measured) {
  const Json& r = measured.record;
  const std::string op = r["op"];
  Json c;
  for (const char* key : {"op", "variant", "target", "dtype", "suite"}) c[key] = r[key];
  if (IsDrift(op)) {
    c["epochs"] = r["epochs"];
    c["summary"] = r["summary"];
    c["in_situ"] = Json::object();
    for (const auto& [name, s] : r["in_situ"].items()) {
      c["in_situ"][name] = {{"calls", s["calls"]},
                            {"max_ulp", s["max_ulp"]},
                            {"mean_ulp", s["mean_ulp"]},
                            {"special_mismatch", s["special_mismatch"]},
                            {"correctly_rounded", s["correctly_rounded"]}};
    }
    c["final_parameters_digest"] = r["final_parameters_digest"];
    const std::vector<float>& loss = measured.outputs;
    c["loss_digest"] = DigestHex(Fnv1a(loss.data(), loss.size() * sizeof(float)));
    c["loss"] = LossSamples(loss);
    return c;
  }
  c["seed"] = r["seed"];
  if (HasCodes(op)) {
    for (const std::string& key : CaseKeys(op)) {
      if (key != "outputs" && !c.contains(key)) c[key] = r[key];
    }
    c["outputs"] = CodeLines(measured.codes);
    return c;
  }
  if (IsReduction(op)) {
    c["shape"] = r["shape"];
    c["instances"] = r["instances"];
  }
  c["n"] = r["n"];
  c["histogram"] = SparseHistogram(r["histogram"]);
  for (const char* key : {"special_mismatch", "signed_zero_mismatch", "max_ulp", "max_input",
                          "mean_ulp", "correctly_rounded"}) {
    c[key] = r[key];
  }
  const Json& conformance = r["conformance"];
  c["conformance"] = {{"model", conformance["model"]},
                      {"expected", conformance["expected"]},
                      {"mismatches", conformance["mismatches"]}};
  if (IsReduction(op)) {
    const Json& b = r["bound_fraction"];
    c["bound_fraction"] = {{"histogram", SparseHistogram(b["histogram"])},
                           {"max", b["max"]},
                           {"max_input", b["max_input"]},
                           {"above_one", b["above_one"]},
                           {"overflow_exempt", b["overflow_exempt"]}};
  }
  c["output_digest"] = r["output_digest"];
  c["outputs"] = OutputLines(measured.outputs);
  return c;
}

GoldenFile MeasureGolden(const std::vector<MeasureSpec>& specs, const TargetInfo& target,
                         const std::string& op, unsigned threads, GoldenSource source,
                         const ForcedBless* forced, const GoldenFile* recorded) {
  GoldenFile file;
  file.target = target.name;
  file.op = op;
  Json cases = Json::array();
  const LoadedPlugin* plugin = PluginOf(target);
  for (MeasureSpec spec : specs) {
    if (plugin != nullptr) {
      // A plugin's goldens: its kernels, on the runs of their op and formats.
      if (!plugin->Gives(spec.op, spec.dtype)) continue;
      spec.variants = PluginVariants({&target}, spec.op, spec.dtype);
    }
    spec.targets = {&target};
    spec.threads = threads;
    spec.keep_outputs = true;
    spec.models_only = source == GoldenSource::kModels;
    const Measurement m = Measure(spec);
    for (const MeasuredCase& c : m.cases) {
      if (c.record.contains("fault")) {
        file.faults[GoldenCaseLabel(c.record)] = {FaultText(c.record), ReplayCommand(m.spec, c.record)};
        continue;
      }
      cases.push_back(GoldenCaseJson(c));
      file.describe.push_back(m.describe);
    }
  }
  Json& j = file.json;
  j["format"] = kGoldenFormat;
  j["generated_by"] = std::string(ToolVersion()) + " golden bless";
  j["regenerate"] =
      plugin != nullptr
          ? fmt::format("build/bin/ulpgate golden bless {} --op {}", plugin->Argument(), op)
          : fmt::format("build/bin/ulpgate golden bless --target {} --op {}", target.name, op);
  j["about"] =
      IsBlockQuant(op)
          ? "Per (block spec, scale rule): what the target's block quantization kernel must give "
            "on a seeded [n, 64] tensor blocked along rows, evaluated on the rule's model "
            "(oracles/block_scale.h, elements to nearest even, saturating): the blocks off it and "
            "the first, the digest and every output, 32 two-digit hex codes per line: the scales "
            "(one per block), then the element codes in the tensor's order."
      : IsCast(op)
          ? "Per (destination, variant, suite): what the target's cast kernel must give, evaluated "
            "on the policy its variant claims (the exact cast model): the mismatches against it, "
            "the first inputs off it, every policy of the catalogue followed bit for bit, the max "
            "ULP in the destination's ULPs and its input, the correctly rounded count, the digest "
            "of the codes and every code, 32 per line, in input order."
      : IsDrift(op)
          ? "Training-run drift per (scenario, run spec) on this target: summary figures, in-situ "
            "error statistics, the digest of the final parameters, the loss of every 10th epoch "
            "and of the last (hex floats) and the digest of every epoch's loss bits."
          : "Per (variant, suite): what the target's kernel must give, evaluated on its expected "
            "model: the ULP-error histogram (the count of every non-empty bin), the max ULP and "
            "its input, the correctly rounded count, the conforming model, the output digest and "
            "every output's bit pattern, 16 per line, in input order; per (variant, dtype) the "
            "digest of a sweep of 2^24 inputs (as `ulpgate sweep` reports it).";
  j["target"] = target.name;
  if (plugin != nullptr) {
    j["plugin"] = plugin->from_iut ? "--iut " + plugin->path
                                   : std::filesystem::path(plugin->path).filename().string();
  }
  j["op"] = op;
  if (forced != nullptr) {
    j["forced"] = {{"reason", forced->reason}, {"failing_budgets", forced->failing_budgets}};
  }
  j["cases"] = cases;
  const ElementwiseOpInfo* swept = SweptOp(op);
  if (swept != nullptr && plugin == nullptr) {
    j["sweeps"] = MeasureSweeps(*swept, target, threads, source, recorded, &file, &specs);
  }
  return file;
}

std::vector<GoldenSweep> GoldenSweepPlan(const std::string& op) {
  std::vector<GoldenSweep> plan;
  const ElementwiseOpInfo* info = SweptOp(op);
  if (info == nullptr) return plan;
  for (const std::string& dtype : MeasurableDtypes(op)) {
    const SweepDomain domain = GoldenSweepDomain(*info, *FindFormat(dtype));
    for (const std::string& variant : MeasurableVariants(op, dtype)) {
      plan.push_back({variant, dtype, domain, kGoldenSweepBegin, kGoldenSweepEnd});
    }
  }
  return plan;
}

std::string GoldenSweepLabel(const std::string& op, const std::string& target, const Json& sweep) {
  const std::string dtype = sweep["dtype"];
  std::string fixed;
  for (const Json& f : sweep["fixed"]) fixed += (fixed.empty() ? " at " : ",") + f.get<std::string>();
  return fmt::format("{} {} {}{} sweep {}{} [{}, {})", op, sweep["variant"].get<std::string>(),
                     target, dtype == "f32" ? "" : " " + dtype, sweep["domain"].get<std::string>(),
                     fixed, sweep["range"][0].get<std::string>(),
                     sweep["range"][1].get<std::string>());
}

void ValidateGolden(const std::string& path, const Json& json) {
  const JsonField root(path, "", json);
  root.RequireObject();
  const std::string format = root["format"].String();
  if (format != kGoldenFormat) {
    root["format"].Fail(fmt::format("unsupported format '{}' (this ulpgate reads {})", format,
                                    kGoldenFormat));
  }
  const std::string target_name = root["target"].String();
  const TargetInfo* target = FindAnyTarget(target_name);
  if (root.Has("plugin")) {
    const std::string library = root["plugin"].String();
    if (target == nullptr || !IsPluginTarget(*target)) {
      root["target"].Fail(fmt::format("the goldens of plugin '{}' ({}): give it with {}", target_name,
                                      library, library.rfind("--iut ", 0) == 0 ? "--iut" : "--plugin"));
    }
  } else if (target == nullptr || IsPluginTarget(*target)) {
    std::vector<std::string> compiled;
    for (const TargetInfo& t : CompiledTargets()) compiled.push_back(t.name);
    root["target"].Fail(fmt::format("unknown target '{}' (compiled: {})", target_name,
                                    Joined(compiled)));
  }
  const std::string op = root["op"].String();
  RequireOneOf(root["op"], MeasurableOps(), "op");
  const std::filesystem::path place(path);
  if (place.filename() != op + ".json" || place.parent_path().filename() != target_name) {
    root["target"].Fail(fmt::format(
        "the file says target {} and op {}, so it belongs at <dir>/{}/{}.json", target_name, op,
        target_name, op));
  }
  std::vector<std::string> keys = {"format", "generated_by", "regenerate", "about", "target",
                                   "plugin", "op",     "forced", "cases", "sweeps"};
  root.OnlyKeys(keys);
  for (const char* key : {"generated_by", "regenerate", "about"}) root[key].String();
  if (root.Has("forced")) {
    root["forced"].OnlyKeys({"reason", "failing_budgets"});
    root["forced"]["reason"].String();
    root["forced"]["failing_budgets"].Strings();
  }
  if (root.Has("sweeps")) {
    const ElementwiseOpInfo* swept = SweptOp(op);
    if (swept == nullptr) root["sweeps"].Fail("sweeps are of elementwise ops of two operands");
    std::map<std::string, size_t> sweeps_seen;
    for (size_t i = 0; i < root["sweeps"].Size(); ++i) {
      ParseGoldenSweep(root["sweeps"][i], *swept);
      const auto [it, fresh] =
          sweeps_seen.emplace(GoldenSweepLabel(op, target_name, root["sweeps"][i].json()), i);
      if (!fresh) root["sweeps"][i].Fail(fmt::format("the same sweep as /sweeps/{}", it->second));
    }
  }
  const JsonField cases = root["cases"];
  std::map<std::string, size_t> seen;
  for (size_t i = 0; i < cases.Size(); ++i) {
    ValidateCase(cases[i], op, *target);
    const auto [it, fresh] = seen.emplace(GoldenCaseLabel(cases[i].json()), i);
    if (!fresh) cases[i].Fail(fmt::format("the same case as /cases/{}", it->second));
  }
}

GoldenFile ReadGoldenFile(const std::string& path) {
  GoldenFile file;
  file.path = path;
  file.json = ReadJsonFile(path);
  ValidateGolden(path, file.json);
  file.target = file.json["target"];
  file.op = file.json["op"];
  return file;
}

std::vector<MeasureSpec> RecordedRuns(const GoldenFile& file) {
  std::vector<MeasureSpec> runs;
  for (const Json& c : file.json["cases"]) {
    MeasureSpec spec;
    spec.op = file.op;
    spec.suite = c["suite"];
    spec.dtype = c["dtype"];
    if (IsDrift(file.op)) {
      spec.n = c["epochs"];
    } else {
      spec.seed = c["seed"];
      spec.n = IsReduction(file.op) ? c["instances"].get<uint64_t>() : c["n"].get<uint64_t>();
      if (IsReduction(file.op)) spec.shape = c["shape"];
    }
    auto same = [&](const MeasureSpec& s) {
      return s.suite == spec.suite && s.dtype == spec.dtype && s.seed == spec.seed &&
             s.n == spec.n && s.shape == spec.shape;
    };
    auto it = std::find_if(runs.begin(), runs.end(), same);
    if (it == runs.end()) it = runs.insert(runs.end(), spec);
    it->variants.push_back(c["variant"]);
  }
  return runs;
}

std::string GoldenCaseLabel(const Json& c) {
  const std::string op = c["op"];
  return Label(op, c["variant"], c["target"], c["dtype"], c["suite"], SizeText(op, c));
}

std::vector<std::string> PlannedCaseLabels(const std::string& op, const std::string& target) {
  std::vector<std::string> labels;
  const LoadedPlugin* plugin = FindPlugin(target);
  for (const MeasureSpec& spec : GoldenPlan(op)) {
    Json size = {{"seed", spec.seed}, {"n", spec.n}, {"instances", spec.n},
                 {"shape", spec.shape}, {"epochs", spec.n}};
    if (plugin != nullptr && !plugin->Gives(spec.op, spec.dtype)) continue;
    for (const std::string& variant :
         plugin != nullptr ? PluginVariants({&plugin->target}, spec.op, spec.dtype) : spec.variants) {
      labels.push_back(Label(op, variant, target, spec.dtype, spec.suite, SizeText(op, size)));
    }
  }
  return labels;
}

std::vector<CaseDifference> CompareGolden(const GoldenFile& old_file, const GoldenFile& new_file) {
  std::vector<CaseDifference> differences;
  const Json& old_cases = old_file.json["cases"];
  const Json& new_cases = new_file.json["cases"];
  std::map<std::string, size_t> old_index;
  for (size_t i = 0; i < old_cases.size(); ++i) old_index[GoldenCaseLabel(old_cases[i])] = i;
  std::map<std::string, bool> matched;
  for (size_t i = 0; i < new_cases.size(); ++i) {
    const std::string label = GoldenCaseLabel(new_cases[i]);
    const auto it = old_index.find(label);
    if (it == old_index.end()) {
      differences.push_back({label, "new case, not in the golden file", {}, {}, 0, {}});
      continue;
    }
    matched[label] = true;
    const DescribeOutput describe = i < new_file.describe.size() ? new_file.describe[i] : nullptr;
    CaseDifference d =
        CompareCase(old_cases[it->second], new_cases[i], describe, old_file.path);
    if (!d.fields.empty() || d.outputs_differing > 0) differences.push_back(std::move(d));
  }
  for (const Json& c : old_cases) {
    const std::string label = GoldenCaseLabel(c);
    if (matched.count(label)) continue;
    if (const auto fault = new_file.faults.find(label); fault != new_file.faults.end()) {
      CaseDifference d{label, "the kernel faulted: " + fault->second.text + "; the case was not measured",
                       {}, {}, 0, {}};
      d.replay = fault->second.replay;
      differences.push_back(std::move(d));
    } else {
      differences.push_back({label, "in the golden file but not measured now", {}, {}, 0, {}});
    }
  }
  // Sweeps: the digest, and the first input where the kernel left its model.
  const Json no_sweeps = Json::array();
  const Json& old_sweeps = old_file.json.contains("sweeps") ? old_file.json["sweeps"] : no_sweeps;
  const Json& new_sweeps = new_file.json.contains("sweeps") ? new_file.json["sweeps"] : no_sweeps;
  std::map<std::string, const Json*> old_sweep;
  for (const Json& s : old_sweeps) old_sweep[GoldenSweepLabel(old_file.op, old_file.target, s)] = &s;
  for (const Json& s : new_sweeps) {
    const std::string label = GoldenSweepLabel(new_file.op, new_file.target, s);
    const auto it = old_sweep.find(label);
    if (it == old_sweep.end()) {
      differences.push_back({label, "new sweep, not in the golden file", {}, {}, 0, {}});
      continue;
    }
    const Json& old_entry = *it->second;
    old_sweep.erase(it);
    CaseDifference d;
    d.label = label;
    for (const char* field : {"model", "digest"}) {
      if (old_entry[field] != s[field]) {
        d.fields.push_back({field, old_entry[field].get<std::string>(), s[field].get<std::string>()});
      }
    }
    const auto first = new_file.sweep_differences.find(label);
    if (first != new_file.sweep_differences.end()) {
      d.outputs.push_back(first->second);  // the first only: `ulpgate sweep` counts them
      const ElementwiseOpInfo* op = SweptOp(new_file.op);
      const GoldenSweep sweep = ParseGoldenSweep(JsonField(new_file.path, "", s), *op);
      d.replay = SweepReplayCommand(new_file.op, sweep.domain, sweep.variant, new_file.target,
                                    first->second.index);
    }
    if (!d.fields.empty()) differences.push_back(std::move(d));
  }
  for (const auto& [label, entry] : old_sweep) {
    differences.push_back({label, "in the golden file but not measured now", {}, {}, 0, {}});
  }
  return differences;
}

std::vector<CaseDifference> CheckGoldenSweeps(const GoldenFile& file, const TargetInfo& target,
                                              unsigned threads, size_t* run) {
  *run = 0;
  const ElementwiseOpInfo* swept = SweptOp(file.op);
  if (swept == nullptr || !file.json.contains("sweeps") || PluginOf(target) != nullptr) return {};
  GoldenFile now;
  now.path = file.path;
  now.op = file.op;
  now.target = file.target;
  now.json["cases"] = file.json["cases"];  // only the sweeps are compared
  now.json["sweeps"] = MeasureSweeps(*swept, target, threads, GoldenSource::kKernels, &file, &now);
  *run = now.sweeps_run;
  return CompareGolden(file, now);
}

std::string GoldenText(const GoldenFile& file) { return file.json.dump(2) + "\n"; }

std::string CastCodeText(const FloatFormat& to, uint32_t code) {
  const double v = DecodeBits(to, code);
  return fmt::format("{} ({})", BitsText(to, code),
                     std::isnan(v) ? std::string("nan") : fmt::format("{:g}", v));
}

}  // namespace ulpgate
