// The cast ops in the CLI (tools/cast_commands.h).

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <thread>

#include "kernels/cast.h"
#include "oracles/cast_reference.h"
#include "oracles/format.h"
#include "suites/engine/cast_cases.h"
#include "suites/engine/op_table.h"
#include "suites/engine/plugins.h"
#include "suites/inputs/cast_suites.h"
#include "suites/inputs/inputs.h"
#include "suites/inputs/numpy_files.h"
#include "suites/reports/number_text.h"
#include "tools/cast_commands.h"
#include "tools/cli.h"
#include "tools/text_table.h"

namespace ulpgate {
namespace {

struct CastOp {
  const FloatFormat* from;
  const FloatFormat* to;
};

CastOp CastOpArguments(const std::string& op, const std::string& dtype) {
  const FloatFormat* from = CastOpSource(op);
  if (from == nullptr) throw UsageError("'" + op + "' is no cast op");
  const FloatFormat* to = FindCastDestination(dtype);
  if (to == nullptr) {
    std::string known;
    for (const FloatFormat* f : kCastDestinations) known += (known.empty() ? "" : ", ") + std::string(f->name);
    throw UsageError("--dtype " + dtype + ": " + op + " casts to " + known);
  }
  return {from, to};
}

std::vector<std::string> CastVariantArgument(const CastOp& c, const std::string& spec) {
  std::vector<std::string> variants = SplitList(spec);
  std::string known;
  for (const CastVariantInfo& v : kCastVariants) {
    if (CastVariantApplies(*c.from, *c.to, v.variant)) known += std::string(v.name) + ", ";
  }
  // The loaded plugins' and IUTs' kernels of the cast, and "none" (theirs only).
  const std::vector<std::string> theirs = LoadedPluginVariants(CastOpName(*c.from), c.to->name);
  for (const std::string& v : theirs) known += v + ", ";
  if (!theirs.empty()) known += "none, ";
  for (const std::string& v : variants) {
    if (std::find(theirs.begin(), theirs.end(), v) != theirs.end() || (v == "none" && !theirs.empty())) {
      continue;
    }
    const CastVariantInfo* info = FindCastVariant(v);
    if (info == nullptr || !CastVariantApplies(*c.from, *c.to, info->variant)) {
      throw UsageError(fmt::format("unknown variant '{}' of a cast from {} to {} ({}all)", v,
                                   c.from->name, c.to->name, known));
    }
  }
  return variants;
}

std::string InputText(const CastInputs& inputs, size_t i) {
  return fmt::format("{} = {}", BitsText(*inputs.from, inputs.patterns[i]),
                     std::isnan(inputs.values[i]) ? std::string("nan")
                                                  : fmt::format("{:a}", inputs.values[i]));
}

std::string CodeText(const FloatFormat& to, uint64_t code) {
  const double v = DecodeBits(to, code);
  return fmt::format("{} ({})", BitsText(to, code),
                     std::isnan(v) ? std::string("nan") : fmt::format("{:g}", v));
}

const std::vector<uint8_t>& ModelCodes(const CastModels& models, const CastPolicy& policy) {
  for (size_t p = 0; p < models.policies.size(); ++p) {
    if (models.policies[p] == policy) return models.codes[p];
  }
  throw std::logic_error("no model " + policy.Name());
}

// A case's text: its conformance, the policies it follows, or the nearest
// with its first inputs; per suite its mismatches with the policy claimed.
void PrintCastCase(std::ostream& out, const CastOp& c, const CastInputs& inputs,
                   const CastModels& models, const CastCaseResult& r, const std::string& name) {
  if (r.fault) {
    // Nothing measured: the fault, its input (or call) and how to replay it.
    const KernelFault& f = *r.fault;
    out << "  " << name << ": " << KernelFaultName(f.kind) << ": " << f.detail;
    if (f.index >= 0) {
      out << fmt::format(" at input #{}: {}", f.index, InputText(inputs, static_cast<size_t>(f.index)));
    } else {
      out << fmt::format(" in a call of inputs #{} to #{}", f.first, f.first + f.count - 1);
    }
    out << "; the case was not measured";
    if (!r.claimed.empty()) out << " (it claims " << r.claimed << ")";
    out << "\n";
    if (const LoadedPlugin* p = FindPlugin(r.target)) {
      out << fmt::format("    reproduce: ulpgate run --op {} --dtype {} --variant {} {}\n", CastOpName(*c.from),
                         c.to->name, r.variant, p->Argument());
    }
    return;
  }
  out << "  " << name;
  if (!r.claimed.empty()) {
    const bool follows = r.claimed_fit && r.claimed_fit->mismatches == 0;
    out << ": claims " << r.claimed << (follows ? ", follows it" : ", LEAVES IT");
  }
  out << "\n";
  if (!r.claimed.empty()) {
    std::string suites;
    for (const CastSuiteCount& s : r.per_suite) {
      suites += fmt::format("{}{} {} of {}", suites.empty() ? "" : ", ", s.suite, s.mismatches, s.n);
    }
    out << "    off " << r.claimed << ": " << suites << "\n";
  }
  if (!r.followed.empty()) {
    std::string names;
    for (const std::string& f : r.followed) names += (names.empty() ? "" : ", ") + f;
    out << "    follows bit for bit: " << names << "\n";
  } else if (!r.fits.empty()) {
    const CastPolicyFit& nearest = r.fits.front();
    out << fmt::format("    follows no policy; nearest {} ({} of {} differ), first:\n", nearest.name,
                       nearest.mismatches, r.n);
    for (size_t i : nearest.first_mismatches) {
      out << fmt::format("      {} -> {}, {} gives {}\n", InputText(inputs, i),
                         CodeText(*c.to, r.codes[i]), nearest.name,
                         CodeText(*c.to, ModelCodes(models, nearest.policy)[i]));
    }
  }
  if (r.claimed_fit && r.claimed_fit->mismatches != 0 && !r.followed.empty()) {
    out << "    first off " << r.claimed << ":\n";
    for (size_t i : r.claimed_fit->first_mismatches) {
      out << fmt::format("      {} -> {}, {} gives {}\n", InputText(inputs, i),
                         CodeText(*c.to, r.codes[i]), r.claimed,
                         CodeText(*c.to, ModelCodes(models, r.claimed_fit->policy)[i]));
    }
  }
  out << fmt::format(
      "    in range ({} of {}): max {} {} ULP{}, correctly rounded {}{}\n", r.in_range, r.n,
      FormatUlp(r.max_ulp), c.to->name,
      r.in_range == 0 ? "" : fmt::format(" at {}", InputText(inputs, r.max_ulp_index)),
      r.correctly_rounded, r.special == 0 ? "" : fmt::format(", NaN or infinite {}", r.special));
}

// Cases with the same variant and outputs print once, with all their targets.
void PrintCastCases(std::ostream& out, const CastOp& c, const CastInputs& inputs,
                    const CastModels& models, const std::vector<CastCaseResult>& results) {
  std::vector<bool> done(results.size(), false);
  for (size_t i = 0; i < results.size(); ++i) {
    if (done[i]) continue;
    std::string targets = results[i].target;
    for (size_t j = i + 1; j < results.size() && !results[i].fault; ++j) {
      if (!done[j] && !results[j].fault && results[j].variant == results[i].variant &&
          results[j].codes == results[i].codes) {
        targets += ", " + results[j].target;
        done[j] = true;
      }
    }
    PrintCastCase(out, c, inputs, models, results[i],
                  fmt::format("{} on {}", results[i].variant, targets));
  }
}

std::vector<uint8_t> FileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError("cannot read " + path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A cast's source patterns from a file: .npy/.npz (float32 for f32; for bf16
// and f16 what ArrayValues takes) or raw little-endian patterns.
std::vector<uint32_t> ReadCastInputs(const FloatFormat& from, const std::string& path) {
  std::vector<uint32_t> out;
  if (IsNumpyPath(path)) {
    const std::vector<NumpyArray> arrays = ReadNumpyFile(path);
    const NumpyArray& a = arrays.front();
    if (!IsBinary32(from) && (a.dtype == "<u2" || a.dtype == "|V2" || a.dtype == "<f2")) {
      for (size_t i = 0; i < a.size(); ++i) out.push_back(uint32_t{a.data[2 * i]} | (uint32_t{a.data[2 * i + 1]} << 8));
      return out;
    }
    // NaN patterns are not values: float32 files keep their bits.
    if (IsBinary32(from) && a.dtype == "<f4") {
      for (size_t i = 0; i < a.size(); ++i) {
        uint32_t b;
        std::memcpy(&b, a.data.data() + 4 * i, 4);
        out.push_back(b);
      }
      return out;
    }
    for (float v : ArrayValues(a, from, path)) {
      uint32_t b;
      std::memcpy(&b, &v, 4);
      out.push_back(IsBinary32(from) ? b
                                     : static_cast<uint32_t>(EncodeBits(from, static_cast<double>(v))));
    }
    return out;
  }
  const std::vector<uint8_t> bytes = FileBytes(path);
  const size_t width = static_cast<size_t>(from.storage_bytes());
  if (bytes.size() % width != 0) {
    throw InputError(fmt::format("{}: {} bytes is no whole number of {}-byte {} values", path,
                                 bytes.size(), width, from.name));
  }
  for (size_t i = 0; i < bytes.size(); i += width) {
    uint32_t b = 0;
    for (size_t k = 0; k < width; ++k) b |= uint32_t{bytes[i + k]} << (8 * k);
    out.push_back(b);
  }
  return out;
}

std::vector<uint8_t> ReadCastCodes(const std::string& path) {
  if (IsNumpyPath(path)) {
    const std::vector<NumpyArray> arrays = ReadNumpyFile(path);
    const NumpyArray& a = arrays.front();
    if (a.dtype != "|u1" && a.dtype != "|i1" && a.dtype != "<u1") {
      throw InputError(path + ": the codes must be uint8, one a byte, got dtype " + a.dtype);
    }
    return a.data;
  }
  return FileBytes(path);
}

}  // namespace

void RunCastCommand(const RunArgs& args) {
  const CastOp c = CastOpArguments(args.kernel, args.dtype);
  if (!args.shape.empty() || !args.json_path.empty()) {
    throw UsageError("a cast op takes --suite or --inputs, --n, --seed, --variant, --target, "
                     "--plugin, --iut, --save-inputs and --dump (every input: sweep)");
  }
  for (const std::string* path : {&args.dump_path, &args.save_inputs_path}) {
    if (!path->empty() && (path->size() < 4 || path->compare(path->size() - 4, 4, ".npy") != 0)) {
      throw UsageError(*path + ": a cast's sources and codes are written as .npy");
    }
  }
  // The plugins' and IUTs' targets beside the compiled ones, loaded before
  // --variant is read, which may name their kernels.
  const std::vector<const TargetInfo*> plugin_targets = LoadPlugins(args.plugins);
  if (!args.suite.empty() && !args.inputs_path.empty()) {
    throw UsageError("--suite and --inputs exclude each other");
  }
  const std::vector<std::string> variants = CastVariantArgument(c, args.variant);
  std::vector<std::string> suites = CastSuiteNames();
  if (!args.suite.empty() && args.suite != "all") {
    if (std::find(suites.begin(), suites.end(), args.suite) == suites.end()) {
      throw UsageError("unknown suite '" + args.suite + "' of " + args.kernel +
                       " (boundary, random, scaled, all)");
    }
    suites = {args.suite};
  }
  CastInputs inputs;
  inputs.from = c.from;
  if (!args.inputs_path.empty()) {
    // Source values from a file (as check reads them), the kernels' outputs measured.
    std::vector<uint32_t> patterns = ReadCastInputs(*c.from, args.inputs_path);
    if (args.n != 0 && args.n < patterns.size()) patterns.resize(args.n);
    inputs.Add(args.inputs_path, patterns);
  } else {
    for (const std::string& s : suites) {
      inputs.Add(s, GenerateCastSuite(*c.from, *c.to, s, args.seed,
                                      args.n ? args.n : kCastSuiteDefaultN));
    }
  }
  std::vector<std::string> skipped;
  // An empty --target (check --plugin) runs the plugins' kernels only.
  std::vector<const TargetInfo*> targets;
  if (!args.target.empty()) targets = ResolveTargets(args.target, &skipped);
  targets.insert(targets.end(), plugin_targets.begin(), plugin_targets.end());
  const CastModels models = EvaluateCastModels(*c.from, *c.to, inputs, args.threads);
  const std::vector<CastCaseResult> results =
      RunCastKernels(*c.from, *c.to, inputs, models, variants, targets);
  std::string counts;
  for (const CastInputs::Part& p : inputs.parts) {
    counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", p.suite, p.count);
  }
  std::cout << fmt::format("{}: {} -> {}, inputs {} (seed {}); {} policies of the cast model\n",
                           args.kernel, c.from->name, c.to->name, counts, args.seed,
                           models.policies.size());
  if (!skipped.empty()) std::cout << "  not run: " << DescribeSkipped(skipped) << "\n";
  PrintCastCases(std::cout, c, inputs, models, results);
  if (!args.save_inputs_path.empty()) {
    // As check and run --inputs read them: float32 for f32 (NaNs keep their
    // bits), uint16 patterns for bf16 and f16.
    NumpyArray a;
    a.name = "x";
    a.dtype = IsBinary32(*c.from) ? "<f4" : "<u2";
    a.shape = {inputs.patterns.size()};
    const size_t width = IsBinary32(*c.from) ? 4 : 2;
    for (uint32_t p : inputs.patterns) {
      for (size_t k = 0; k < width; ++k) a.data.push_back(static_cast<uint8_t>(p >> (8 * k)));
    }
    WriteNumpyArrays(args.save_inputs_path, {a});
  }
  if (!args.dump_path.empty()) {
    // The codes of one kernel, so that check can name the policy they follow.
    if (results.size() != 1) {
      throw UsageError(fmt::format("--dump writes the codes of one kernel: {} ran (give one "
                                   "--variant and one --target)", results.size()));
    }
    NumpyArray a;
    a.name = "codes";
    a.dtype = "|u1";
    a.shape = {results.front().codes.size()};
    a.data = results.front().codes;
    WriteNumpyArrays(args.dump_path, {a});
  }
  bool off = false;
  for (const CastCaseResult& r : results) off = off || !r.claimed_fit || r.claimed_fit->mismatches != 0;
  if (args.require_conformance && off) ExitStatus() = 1;
  if (args.max_ulp) {
    for (const CastCaseResult& r : results) {
      if (r.max_ulp > *args.max_ulp) ExitStatus() = 1;
    }
  }
  for (const CastCaseResult& r : results) {
    if (r.fault) ExitStatus() = kExitKernelFault;
  }
}

void CheckCastCommand(const CastCheckArgs& args) {
  const CastOp c = CastOpArguments(args.op, args.dtype);
  CastInputs inputs;
  inputs.from = c.from;
  inputs.Add(args.inputs_path, ReadCastInputs(*c.from, args.inputs_path));
  std::vector<uint8_t> codes = ReadCastCodes(args.outputs_path);
  if (c.to->packing == Packing::kNibblePairs && codes.size() * 2 == inputs.values.size() + (inputs.values.size() % 2)) {
    // Two codes a byte, element 2i low: unpacked.
    std::vector<uint8_t> unpacked;
    for (uint8_t b : codes) {
      unpacked.push_back(b & 0xf);
      unpacked.push_back(static_cast<uint8_t>(b >> 4));
    }
    unpacked.resize(inputs.values.size());
    codes = std::move(unpacked);
  }
  if (codes.size() != inputs.values.size()) {
    throw InputError(fmt::format("{} holds {} codes, {} holds {} inputs", args.outputs_path,
                                 codes.size(), args.inputs_path, inputs.values.size()));
  }
  std::optional<CastPolicy> required;
  if (!args.require.empty() && args.require != "any") {
    required = ParseCastPolicy(args.require);
    if (!required || !CastPolicyProblem(*c.from, *c.to, *required).empty()) {
      throw UsageError("--require " + args.require + ": no policy of a cast from " +
                       c.from->name + " to " + c.to->name);
    }
  }
  const CastModels models = EvaluateCastModels(*c.from, *c.to, inputs);
  CastCaseResult r = MeasureCastOutputs(*c.to, inputs, models, std::move(codes), required);
  std::cout << fmt::format("{}: {} -> {}, {} outputs of {}; {} policies of the cast model\n",
                           args.op, c.from->name, c.to->name, r.n, args.outputs_path,
                           models.policies.size());
  PrintCastCase(std::cout, c, inputs, models, r, "outputs");
  if (required && (!r.claimed_fit || r.claimed_fit->mismatches != 0)) ExitStatus() = 1;
  if (args.require == "any" && r.followed.empty()) ExitStatus() = 1;
}

void SweepCastCommand(const std::string& op, const std::string& dtype, const std::string& variant,
                      const std::string& target, unsigned threads) {
  const CastOp c = CastOpArguments(op, dtype);
  const std::vector<std::string> variants = CastVariantArgument(c, variant);
  std::vector<std::string> skipped;
  const std::vector<const TargetInfo*> targets = ResolveTargets(target, &skipped);
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  if (!IsBinary32(*c.from)) {
    // Every pattern of a 16-bit source against every policy of the catalogue.
    CastInputs inputs;
    inputs.from = c.from;
    std::vector<uint32_t> all(0x10000);
    for (uint32_t i = 0; i < all.size(); ++i) all[i] = i;
    inputs.Add("every " + std::string(c.from->name), all);
    const CastModels models = EvaluateCastModels(*c.from, *c.to, inputs, threads);
    std::cout << fmt::format("sweep {}: every {} pattern (65536) -> {}; {} policies\n", op,
                             c.from->name, c.to->name, models.policies.size());
    PrintCastCases(std::cout, c, inputs, models,
                   RunCastKernels(*c.from, *c.to, inputs, models, variants, targets));
    return;
  }
  // Every binary32 pattern. Policies the boundary inputs leave are out; the
  // rest are compared on all 2^32 with their step functions where
  // oracles/cast_reference.h takes them.
  CastInputs boundary;
  boundary.from = c.from;
  boundary.Add("boundary", GenerateCastSuite(*c.from, *c.to, "boundary", 1, 0));
  const CastModels models = EvaluateCastModels(*c.from, *c.to, boundary, threads);
  std::cout << fmt::format("sweep {}: every binary32 pattern (2^32) -> {}\n", op, c.to->name);
  if (!skipped.empty()) std::cout << "  not run: " << DescribeSkipped(skipped) << "\n";
  for (const CastCaseResult& r : RunCastKernels(*c.from, *c.to, boundary, models, variants, targets)) {
    const CastKernel kernel = FindCastKernel(c.from->name, c.to->name, r.variant,
                                             FindTarget(r.target)->bits);
    struct Candidate {
      CastPolicyFit fit;
      std::unique_ptr<Binary32CastReference> reference;
      std::atomic<uint64_t> mismatches{0};
      std::atomic<uint64_t> first{std::numeric_limits<uint64_t>::max()};
    };
    std::vector<std::unique_ptr<Candidate>> candidates;
    std::vector<std::string> unchecked;
    for (const CastPolicyFit& f : r.fits) {
      if (f.mismatches != 0) continue;
      try {
        auto cand = std::make_unique<Candidate>();
        cand->reference = std::make_unique<Binary32CastReference>(*c.to, f.policy);
        cand->fit = f;
        candidates.push_back(std::move(cand));
      } catch (const std::invalid_argument&) {
        unchecked.push_back(f.name);
      }
    }
    const auto start = std::chrono::steady_clock::now();
    constexpr uint64_t kBlock = 1 << 16;
    std::atomic<uint64_t> next{0};
    const auto work = [&] {
      std::vector<uint32_t> in(kBlock);
      std::vector<uint8_t> got(kBlock), want(kBlock);
      for (uint64_t b = next++; b < (uint64_t{1} << 32) / kBlock; b = next++) {
        const uint32_t base = static_cast<uint32_t>(b * kBlock);
        for (uint32_t j = 0; j < kBlock; ++j) in[j] = base + j;
        kernel(in.data(), got.data(), kBlock);
        for (auto& cand : candidates) {
          cand->reference->Fill(base, kBlock, want.data());
          if (std::memcmp(got.data(), want.data(), kBlock) == 0) continue;
          for (uint32_t j = 0; j < kBlock; ++j) {
            if (got[j] == want[j] || SameCastCode(*c.to, got[j], want[j])) continue;
            ++cand->mismatches;
            uint64_t seen = cand->first.load();
            while (base + j < seen && !cand->first.compare_exchange_weak(seen, base + j)) {
            }
          }
        }
      }
    };
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) pool.emplace_back(work);
    for (std::thread& t : pool) t.join();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << fmt::format("  {} on {} (claims {}): {:.1f} s\n", r.variant, r.target, r.claimed,
                             seconds);
    std::string followed;
    bool claimed_holds = false;
    for (const auto& cand : candidates) {
      if (cand->mismatches == 0) {
        followed += (followed.empty() ? "" : ", ") + cand->fit.name;
        claimed_holds = claimed_holds || cand->fit.name == r.claimed;
      } else {
        const uint32_t b = static_cast<uint32_t>(cand->first.load());
        uint8_t got;
        kernel(&b, &got, 1);
        float x;
        std::memcpy(&x, &b, 4);
        std::cout << fmt::format("    off {} at {} patterns, first 0x{:08x} = {:a} -> {}, {} gives {}\n",
                                 cand->fit.name, cand->mismatches.load(), b, x,
                                 CodeText(*c.to, got), cand->fit.name,
                                 CodeText(*c.to, cand->reference->Code(b)));
      }
    }
    std::cout << "    follows bit for bit on every pattern: " << (followed.empty() ? "none" : followed)
              << "\n";
    if (!unchecked.empty()) {
      std::string names;
      for (const std::string& u : unchecked) names += (names.empty() ? "" : ", ") + u;
      std::cout << "    also on every boundary input (no step function for them): " << names << "\n";
    }
    if (r.followed.empty() && !r.fits.empty()) {
      std::cout << fmt::format("    follows no policy on the boundary inputs; nearest {} ({} differ)\n",
                               r.fits.front().name, r.fits.front().mismatches);
    }
    if (r.claimed_fit && r.claimed_fit->mismatches != 0) {
      // The claimed policy is left on the boundary inputs already, so no
      // step function is swept for it: the first of them names the input.
      const size_t i = r.claimed_fit->first_mismatches.front();
      std::cout << fmt::format("    off {} on the boundary inputs ({} of {}), first {} -> {}, {} gives {}\n",
                               r.claimed, r.claimed_fit->mismatches, r.n, InputText(boundary, i),
                               CodeText(*c.to, r.codes[i]), r.claimed,
                               CodeText(*c.to, ModelCodes(models, r.claimed_fit->policy)[i]));
    }
    if (!claimed_holds) ExitStatus() = 1;
  }
}

void PrintCastOps(std::ostream& out) {
  out << "\n  casts to the 8-, 6- and 4-bit formats (run/check/sweep cast_f32, cast_bf16, cast_f16 "
         "--dtype DEST; codes one a byte)\n";
  std::string dests;
  for (const FloatFormat* f : kCastDestinations) dests += (dests.empty() ? "" : ", ") + std::string(f->name);
  out << "    destinations: ";
  PrintWrapped(out, dests, 18, 18);
  for (const CastVariantInfo& v : kCastVariants) {
    out << fmt::format("    {}: follows {}{}\n", v.name, v.policy,
                       v.variant == CastVariant::kViaBf16 ? " (cast_f32 only; not to float8_e8m0fnu)" : "");
  }
}

}  // namespace ulpgate
