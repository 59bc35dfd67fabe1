#include "suites/sweep.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "kernels/narrow_formats.h"
#include "oracles/float_text.h"
#include "suites/digest.h"
#include "suites/inputs.h"
#include "suites/json_file.h"
#include "suites/report.h"
#include "suites/tanh_bwd_cases.h"

namespace ulpgate {

using Json = nlohmann::ordered_json;

namespace {

constexpr uint64_t kPatterns = uint64_t{1} << 32;  // 32-bit patterns, 16-bit pairs


// splitmix64's finalizer: a block's digest hashed with its place, so that
// the sum over blocks is a digest of the whole, whatever order it was added in.
uint64_t Mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::string U128Text(unsigned __int128 x) {
  if (x == 0) return "0";
  std::string s;
  for (; x > 0; x /= 10) s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(x % 10)));
  return s;
}

// Adds `later` (the statistics of inputs after those of `into`) to `into`.
void MergeCase(SweepCase& into, const SweepCase& later) {
  into.stats.Merge(later.stats);
  into.sum_ulp += later.sum_ulp;
  into.digest += later.digest;
  Conformance& c = into.conformance;
  const Conformance& l = later.conformance;
  c.mismatches += l.mismatches;
  if (c.first_mismatch_index < 0) c.first_mismatch_index = l.first_mismatch_index;
  c.matching.erase(std::remove_if(c.matching.begin(), c.matching.end(),
                                  [&](const std::string& m) {
                                    return std::find(l.matching.begin(), l.matching.end(), m) ==
                                           l.matching.end();
                                  }),
                   c.matching.end());
}

// One block's case, its indices moved to the domain's.
SweepCase BlockCase(const CaseResult& r, const FloatFormat& format, uint64_t begin) {
  SweepCase c;
  c.variant = r.variant;
  c.target = r.target;
  c.kind = CaseKindName(r.kind);
  ErrorStatistics::State s = r.stats.state();
  if (s.max_index >= 0) s.max_index += static_cast<int64_t>(begin);
  if (s.first_special_index >= 0) s.first_special_index += static_cast<int64_t>(begin);
  // The block's sum, truncated to 2^-32 ULP: an integer, so blocks add exactly.
  c.sum_ulp = static_cast<unsigned __int128>(std::floor(std::ldexp(s.sum_ulp, 32)));
  s.sum_ulp = 0;
  c.stats = ErrorStatistics(format, s);
  c.conformance = r.conformance;
  if (c.conformance.first_mismatch_index >= 0) {
    c.conformance.first_mismatch_index += static_cast<int64_t>(begin);
  }
  c.digest = r.n == 0 ? 0 : Mix(begin ^ Mix(r.output_digest));  // nothing from an empty range
  return c;
}

Json IndexJson(const SweepDomain& domain, int64_t index) {
  return index < 0 ? Json() : SweepInputJson(domain, static_cast<uint64_t>(index));
}

}  // namespace

uint64_t SweepDomain::size() const {
  return kind == Kind::kPairs ? kPatterns : kPatterns * fixed.size();
}

void SweepDomain::Input(uint64_t index, float* grad, float* t) const {
  if (kind == Kind::kPairs) {
    *grad = static_cast<float>(DecodeBits(*format, index >> 16));
    *t = static_cast<float>(DecodeBits(*format, index & 0xffff));
    return;
  }
  const float fixed_value = fixed[index >> 32];
  const float swept = FloatFromBits(static_cast<uint32_t>(index));
  *grad = kind == Kind::kOverT ? fixed_value : swept;
  *t = kind == Kind::kOverT ? swept : fixed_value;
}

void SweepDomain::Inputs(uint64_t begin, uint64_t count, float* grad, float* t) const {
  for (uint64_t i = 0; i < count; ++i) Input(begin + i, grad + i, t + i);
}

std::string SweepDomain::KindName() const {
  switch (kind) {
    case Kind::kPairs:
      return "pairs";
    case Kind::kOverT:
      return "over_t";
    case Kind::kOverGrad:
      return "over_grad";
  }
  return "?";
}

std::string SweepDomain::Description() const {
  if (kind == Kind::kPairs) return fmt::format("all 2^32 (grad, t) pairs in {}", format->name);
  std::string values;
  for (float v : fixed) values += (values.empty() ? "" : ", ") + HexFloat(v);
  return kind == Kind::kOverT ? fmt::format("every f32 t (2^32 patterns) at grad = {}", values)
                              : fmt::format("every f32 grad (2^32 patterns) at t = {}", values);
}

SweepDomain MakeSweepDomain(const FloatFormat& format, SweepDomain::Kind kind,
                            const std::vector<float>& fixed) {
  SweepDomain d;
  d.format = &format;
  d.kind = kind;
  d.fixed = fixed;
  if (kind == SweepDomain::Kind::kPairs) {
    if (format.bits != 16 || NarrowFormatIndex(format.name) < 0) {
      throw InputError(std::string("all pairs are swept in bf16 or f16, not ") + format.name +
                       " (f32: every t at given grads, or every grad at given t)");
    }
    if (!fixed.empty()) throw InputError("a sweep of all pairs fixes no operand");
    return d;
  }
  if (!IsBinary32(format)) {
    throw InputError(std::string("every t (or grad) is swept in f32; ") + format.name +
                     " sweeps all pairs");
  }
  if (fixed.empty()) throw InputError("give the values of the fixed operand");
  if (fixed.size() > 1024) throw InputError("at most 1024 fixed values");
  for (float v : fixed) {
    if (!std::isfinite(v)) throw InputError("a fixed value must be finite, not " + HexFloat(v));
  }
  return d;
}

Json SweepInputJson(const SweepDomain& domain, uint64_t index) {
  float grad, t;
  domain.Input(index, &grad, &t);
  const auto bits = [&](float x) {
    return IsBinary32(*domain.format) ? BitsHex(x)
                                      : fmt::format("{:#06x}", EncodeBits(*domain.format, x));
  };
  Json j;
  j["index"] = index;
  j["grad"] = HexFloat(grad);
  j["t"] = HexFloat(t);
  j["grad_bits"] = domain.kind == SweepDomain::Kind::kPairs
                       ? fmt::format("{:#06x}", index >> 16)
                       : bits(grad);
  j["t_bits"] = domain.kind == SweepDomain::Kind::kPairs ? fmt::format("{:#06x}", index & 0xffff)
                                                         : bits(t);
  return j;
}

double SweepCase::mean_ulp() const {
  const uint64_t measured = stats.n() - stats.special_mismatch();
  if (measured == 0) return 0;
  return std::ldexp(static_cast<double>(sum_ulp), -32) / static_cast<double>(measured);
}

std::pair<uint64_t, uint64_t> SweepShard(uint64_t begin, uint64_t end, uint64_t k, uint64_t n) {
  if (n == 0 || k >= n) throw InputError(fmt::format("shard {}/{}: K runs from 0 to N-1", k, n));
  const uint64_t length = end - begin;
  // Cuts at block multiples of the domain's index, so that the shards' blocks
  // are the whole sweep's.
  auto cut = [&](uint64_t i) {
    if (i == 0) return begin;
    if (i == n) return end;
    const uint64_t at = begin + static_cast<uint64_t>(
                                    (static_cast<unsigned __int128>(length) * i) / n);
    return std::clamp(at / kSweepBlock * kSweepBlock, begin, end);
  };
  return {cut(k), cut(k + 1)};
}

SweepResult RunSweep(const SweepOptions& options) {
  const SweepDomain& domain = options.domain;
  if (options.begin > options.end || options.end > domain.size()) {
    throw InputError(fmt::format("range {}:{} outside the domain of {} inputs", options.begin,
                                 options.end, domain.size()));
  }
  SweepResult result;
  result.domain = domain;
  result.begin = options.begin;
  result.end = options.end;
  InputSet inputs;
  inputs.operand_names = {"grad", "t"};
  inputs.source = "sweep";
  inputs.columns.resize(2);
  RunOptions run;
  run.format = domain.format;
  run.variants = options.variants;
  run.targets = options.targets;
  run.threads = options.threads;
  bool first = true;
  // An empty range (a shard of a small range) still lists its cases, empty.
  for (uint64_t begin = options.begin; begin < options.end || first;) {
    const uint64_t end = std::min(options.end, (begin / kSweepBlock + 1) * kSweepBlock);
    for (auto& column : inputs.columns) column.resize(end - begin);
    domain.Inputs(begin, end - begin, inputs.columns[0].data(), inputs.columns[1].data());
    const std::vector<CaseResult> block = RunTanhBwd(inputs, run);
    for (size_t c = 0; c < block.size(); ++c) {
      SweepCase part = BlockCase(block[c], *domain.format, begin);
      if (first) {
        result.cases.push_back(std::move(part));
      } else {
        MergeCase(result.cases[c], part);
      }
    }
    first = false;
    begin = end;
    if (options.progress) options.progress(begin - options.begin, options.end - options.begin);
  }
  return result;
}

Json SweepJson(const SweepResult& r) {
  Json j;
  j["format"] = kSweepFormat;
  j["tool"] = "ulpgate 0.1.0";
  j["op"] = r.op;
  j["dtype"] = r.domain.format->name;
  Json fixed = Json::array();
  for (float v : r.domain.fixed) fixed.push_back(HexFloat(v));
  j["domain"] = {{"kind", r.domain.KindName()},
                 {"fixed", fixed},
                 {"size", r.domain.size()},
                 {"description", r.domain.Description()}};
  j["range"] = {r.begin, r.end};
  j["block"] = kSweepBlock;
  j["cases"] = Json::array();
  for (const SweepCase& c : r.cases) {
    const ErrorStatistics::State s = c.stats.state();
    Json fine = Json::object();
    for (size_t i = 0; i < s.fine.size(); ++i) {
      if (s.fine[i] != 0) fine[std::to_string(i)] = s.fine[i];
    }
    Json cj;
    cj["variant"] = c.variant;
    cj["target"] = c.target;
    cj["kind"] = c.kind;
    cj["n"] = s.n;
    cj["histogram"] = s.counts;
    cj["fine_histogram"] = fine;
    cj["special_mismatch"] = s.special_mismatch;
    cj["signed_zero_mismatch"] = s.signed_zero_mismatch;
    cj["correctly_rounded"] = s.correctly_rounded;
    cj["max_ulp"] = s.max_ulp;
    cj["max_input"] = IndexJson(r.domain, s.max_index);
    cj["first_special_input"] = IndexJson(r.domain, s.first_special_index);
    cj["sum_ulp_2^-32"] = U128Text(c.sum_ulp);
    cj["mean_ulp"] = c.mean_ulp();
    cj["p99"] = c.stats.Percentile(99);
    const Conformance& k = c.conformance;
    cj["conformance"] = {{"expected", k.expected_model},
                         {"model", k.model()},
                         {"matching", k.matching},
                         {"mismatches", k.mismatches},
                         {"first_mismatch", IndexJson(r.domain, k.first_mismatch_index)}};
    cj["outputs_digest"] = DigestHex(c.digest);
    j["cases"].push_back(cj);
  }
  return j;
}

SweepResult SweepFromJson(const std::string& path, const Json& json) {
  const JsonField root(path, "", json);
  root.RequireObject();
  root.OnlyKeys({"format", "tool", "op", "dtype", "domain", "range", "block", "cases"});
  if (root["format"].String() != kSweepFormat) {
    root["format"].Fail(fmt::format("'{}' is not a sweep report ({})", root["format"].String(),
                                    kSweepFormat));
  }
  if (root["op"].String() != "tanh_bwd") root["op"].Fail("sweeps are of tanh_bwd");
  if (root["block"].Unsigned() != kSweepBlock) {
    root["block"].Fail(fmt::format("blocks of {} inputs, this ulpgate's are {}",
                                   root["block"].Unsigned(), kSweepBlock));
  }
  const FloatFormat* format = FindFormat(root["dtype"].String());
  if (format == nullptr) root["dtype"].Fail("unknown format");
  const JsonField d = root["domain"];
  d.OnlyKeys({"kind", "fixed", "size", "description"});
  const std::string kind = d["kind"].String();
  SweepDomain::Kind k = SweepDomain::Kind::kPairs;
  if (kind == "over_t") {
    k = SweepDomain::Kind::kOverT;
  } else if (kind == "over_grad") {
    k = SweepDomain::Kind::kOverGrad;
  } else if (kind != "pairs") {
    d["kind"].Fail("expected pairs, over_t or over_grad");
  }
  std::vector<float> fixed;
  for (size_t i = 0; i < d["fixed"].Size(); ++i) {
    const auto v = ParseFloat(d["fixed"][i].String());
    if (!v) d["fixed"][i].Fail("not a float");
    fixed.push_back(*v);
  }
  SweepResult r;
  try {
    r.domain = MakeSweepDomain(*format, k, fixed);
  } catch (const InputError& e) {
    d.Fail(e.what());
  }
  if (d["size"].Unsigned() != r.domain.size()) d["size"].Fail("not the domain's size");
  r.begin = root["range"][0].Unsigned();
  r.end = root["range"][1].Unsigned();
  if (root["range"].Size() != 2 || r.begin > r.end || r.end > r.domain.size()) {
    root["range"].Fail("expected [begin, end] within the domain");
  }
  const JsonField cases = root["cases"];
  for (size_t i = 0; i < cases.Size(); ++i) {
    const JsonField c = cases[i];
    SweepCase sc;
    sc.variant = c["variant"].String();
    sc.target = c["target"].String();
    sc.kind = c["kind"].String();
    ErrorStatistics::State s;
    s.n = c["n"].Unsigned();
    for (size_t b = 0; b < c["histogram"].Size(); ++b) s.counts.push_back(c["histogram"][b].Unsigned());
    s.fine.assign(ErrorStatistics::FineBinCount(), 0);
    c["fine_histogram"].RequireObject();
    for (const auto& [bin, count] : c["fine_histogram"].json().items()) {
      const size_t at = std::strtoull(bin.c_str(), nullptr, 10);
      if (at >= s.fine.size() || !count.is_number_unsigned()) c["fine_histogram"].Fail("bad bin " + bin);
      s.fine[at] = count.get<uint64_t>();
    }
    s.special_mismatch = c["special_mismatch"].Unsigned();
    s.signed_zero_mismatch = c["signed_zero_mismatch"].Unsigned();
    s.correctly_rounded = c["correctly_rounded"].Unsigned();
    s.max_ulp = c["max_ulp"].Number();
    s.max_index = c.Has("max_input") ? static_cast<int64_t>(c["max_input"]["index"].Unsigned()) : -1;
    s.first_special_index = c.Has("first_special_input")
                                ? static_cast<int64_t>(c["first_special_input"]["index"].Unsigned())
                                : -1;
    try {
      sc.stats = ErrorStatistics(*format, s);
    } catch (const std::invalid_argument& e) {
      c["histogram"].Fail(e.what());
    }
    for (char ch : c["sum_ulp_2^-32"].String()) {
      if (ch < '0' || ch > '9') c["sum_ulp_2^-32"].Fail("expected a decimal integer");
      sc.sum_ulp = sc.sum_ulp * 10 + static_cast<unsigned>(ch - '0');
    }
    const JsonField conformance = c["conformance"];
    sc.conformance.expected_model = conformance["expected"].String();
    sc.conformance.matching = conformance["matching"].Strings();
    sc.conformance.mismatches = conformance["mismatches"].Unsigned();
    sc.conformance.first_mismatch_index =
        conformance.Has("first_mismatch")
            ? static_cast<int64_t>(conformance["first_mismatch"]["index"].Unsigned())
            : -1;
    const std::string digest = c["outputs_digest"].String();
    sc.digest = std::strtoull(digest.c_str(), nullptr, 16);
    r.cases.push_back(std::move(sc));
  }
  return r;
}

SweepResult MergeSweeps(const std::vector<std::pair<std::string, SweepResult>>& parts) {
  if (parts.empty()) throw InputError("nothing to merge");
  std::vector<const std::pair<std::string, SweepResult>*> order;
  for (const auto& p : parts) order.push_back(&p);
  std::sort(order.begin(), order.end(),
            [](const auto* a, const auto* b) { return a->second.begin < b->second.begin; });
  SweepResult merged = order.front()->second;
  const auto same_sweep = [&](const SweepResult& a, const SweepResult& b) {
    if (a.op != b.op || std::string_view(a.domain.format->name) != b.domain.format->name ||
        a.domain.kind != b.domain.kind || a.cases.size() != b.cases.size()) {
      return false;
    }
    for (size_t i = 0; i < a.domain.fixed.size(); ++i) {
      if (FloatBits(a.domain.fixed[i]) != FloatBits(b.domain.fixed[i])) return false;
    }
    for (size_t i = 0; i < a.cases.size(); ++i) {
      if (a.cases[i].variant != b.cases[i].variant || a.cases[i].target != b.cases[i].target ||
          a.cases[i].kind != b.cases[i].kind ||
          a.cases[i].conformance.expected_model != b.cases[i].conformance.expected_model) {
        return false;
      }
    }
    return a.domain.fixed.size() == b.domain.fixed.size();
  };
  for (size_t p = 1; p < order.size(); ++p) {
    const auto& [path, part] = *order[p];
    const auto& previous = *order[p - 1];
    if (!same_sweep(merged, part)) {
      throw InputError(fmt::format("{}: not the same sweep as {} (domain, format, variants or "
                                   "targets differ)", path, order.front()->first));
    }
    if (part.begin != merged.end) {
      throw InputError(fmt::format("{} covers {}:{} and {} covers {}:{}: they {}", previous.first,
                                   previous.second.begin, previous.second.end, path, part.begin,
                                   part.end, part.begin < merged.end ? "overlap" : "leave a gap"));
    }
    for (size_t c = 0; c < merged.cases.size(); ++c) MergeCase(merged.cases[c], part.cases[c]);
    merged.end = part.end;
  }
  return merged;
}

}  // namespace ulpgate
