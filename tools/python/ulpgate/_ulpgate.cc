// The C++ side of the Python package (tools/python/ulpgate): check outputs
// held in memory, and sweep a Python callable over a domain, through the same
// engine, oracles and sweep tiers as the CLI. Arrays cross as float32 values
// (operands and outputs) and as storage lanes for a swept callable (float32,
// or the uint16 patterns of bf16 and f16); reports come back as the CLI's JSON.
// The format-level functions (decode, encode, round, the registry's traits)
// take any registered format: codes as uint64, values as float64. Casts cross
// as source patterns (uint32) and destination codes (uint8, one a byte), block
// quantization as float32 values with uint8 scales and codes; both measured by
// the cast model (suites/engine/cast_cases.h, oracles/block_scale.h) and
// returned as dicts. A reduction (linear layer, MSE loss, any op of the
// reduction table) is measured on outputs given as arrays or computed by a
// callable from the op's suites (suites/inputs/reduction_suites.h), and a
// matrix product callable is a DotDoor (python_arrays.h).
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/cast.h"
#include "kernels/elementwise_ops.h"
#include "kernels/narrow_formats.h"
#include "oracles/block_scale.h"
#include "oracles/cast_policy.h"
#include "oracles/format.h"
#include "suites/engine/cast_cases.h"
#include "suites/engine/elementwise_oracle.h"
#include "suites/engine/kernel_fault.h"
#include "suites/engine/plugins.h"
#include "suites/inputs/cast_suites.h"
#include "suites/inputs/check_files.h"
#include "suites/inputs/inputs.h"
#include "suites/inputs/numpy_files.h"
#include "suites/inputs/reduction_suites.h"
#include "suites/investigate/check.h"
#include "suites/investigate/compare.h"
#include "suites/reports/format_list.h"
#include "suites/reports/report.h"
#include "suites/reports/number_text.h"
#include "suites/reveal/invariance.h"
#include "suites/reveal/reveal.h"
#include "suites/reveal/summation_tree.h"
#include "suites/sweep/sweep.h"
#include "tools/python/ulpgate/python_arrays.h"

namespace py = pybind11;

namespace ulpgate {
namespace {

const ElementwiseOpInfo& OpNamed(const std::string& name) {
  const ElementwiseOpInfo* op = FindElementwiseOp(name);
  if (op == nullptr) {
    std::string known;
    for (const ElementwiseOpInfo& o : ElementwiseOps()) known += (known.empty() ? "" : ", ") + std::string(o.name);
    throw py::value_error("unknown op '" + name + "' (" + known + ")");
  }
  return *op;
}

// Any registered format, for the format-level functions.
const FloatFormat& AnyFormatNamed(const std::string& name) {
  const FloatFormat* f = FindFormat(name);
  if (f == nullptr) {
    std::string known;
    for (const FloatFormat* g : Formats()) known += (known.empty() ? "" : ", ") + std::string(g->name);
    throw py::value_error("unknown format '" + name + "' (" + known + ")");
  }
  return *f;
}

// A format the op has kernels and models in (the op table decides): check
// and sweep refuse another, rather than measure it as some other format.
const FloatFormat& FormatNamed(const ElementwiseOpInfo& op, const std::string& name) {
  const FloatFormat* f = FindFormat(name);
  if (f == nullptr || !RunsIn(op, *f)) {
    std::string known;
    for (const std::string& d : ElementwiseDtypes(op)) known += (known.empty() ? "" : ", ") + d;
    throw py::value_error((f == nullptr ? "unknown dtype '" : "dtype '") + name + "': " +
                          std::string(op.name) + " runs in " + known);
  }
  return *f;
}

using Doubles = py::array_t<double, py::array::c_style | py::array::forcecast>;
using Codes = py::array_t<uint64_t, py::array::c_style | py::array::forcecast>;

// Every registered format's traits, as `ulpgate list --json` gives them.
std::string FormatsJsonText() {
  nlohmann::ordered_json all = nlohmann::ordered_json::array();
  for (const FloatFormat* f : Formats()) all.push_back(FormatJson(*f));
  return all.dump();
}

// The values of codes of a format (NaN for its NaNs), exactly, as doubles.
py::array_t<double> Decode(const Codes& codes, const std::string& name) {
  const FloatFormat& f = AnyFormatNamed(name);
  const uint64_t mask = f.bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << f.bits) - 1;
  py::array_t<double> out(codes.size());
  double* o = out.mutable_data();
  for (py::ssize_t i = 0; i < codes.size(); ++i) {
    const uint64_t c = codes.data()[i];
    if ((c & ~mask) != 0) {
      throw py::value_error("element " + std::to_string(i) + ": " + std::to_string(c) + " is not a " +
                            std::to_string(f.bits) + "-bit " + f.name + " code");
    }
    o[i] = DecodeBits(f, c);
  }
  return out;
}

// The codes of values of a format; a value the format lacks is an error.
py::array_t<uint64_t> Encode(const Doubles& values, const std::string& name) {
  const FloatFormat& f = AnyFormatNamed(name);
  py::array_t<uint64_t> out(values.size());
  uint64_t* o = out.mutable_data();
  for (py::ssize_t i = 0; i < values.size(); ++i) {
    const double v = values.data()[i];
    if (!IsRepresentable(f, v)) {
      throw py::value_error("element " + std::to_string(i) + " is not a " + f.name + " value");
    }
    o[i] = EncodeBits(f, v);
  }
  return out;
}

// Each value rounded once to the format (to nearest even, or toward zero),
// with its subnormals and overflow.
py::array_t<double> Round(const Doubles& values, const std::string& name, bool toward_zero) {
  const FloatFormat& f = AnyFormatNamed(name);
  if (f.precision > 52) throw py::value_error(std::string(f.name) + ": rounding a double to it is exact");
  py::array_t<double> out(values.size());
  double* o = out.mutable_data();
  for (py::ssize_t i = 0; i < values.size(); ++i) o[i] = RoundDouble(f, values.data()[i], toward_zero);
  return out;
}

std::vector<float> Values(const py::array_t<float, py::array::c_style | py::array::forcecast>& a) {
  return std::vector<float>(a.data(), a.data() + a.size());
}

py::list OpsList() {
  py::list ops;
  for (const ElementwiseOpInfo& op : ElementwiseOps()) {
    py::dict d;
    d["name"] = std::string(op.name);
    d["operands"] = op.operand_names();
    d["definition"] = std::string(op.definition);
    ops.append(d);
  }
  return ops;
}

std::string Check(const std::string& op_name, const std::string& dtype,
                  const std::vector<py::array_t<float, py::array::c_style | py::array::forcecast>>& operands,
                  const py::array_t<float, py::array::c_style | py::array::forcecast>& outputs,
                  const std::string& label, const std::vector<std::string>& models, unsigned threads) {
  const ElementwiseOpInfo& op = OpNamed(op_name);
  const FloatFormat& format = FormatNamed(op, dtype);
  InputSet inputs;
  inputs.operand_names = op.operand_names();
  inputs.source = "python";
  for (const auto& a : operands) inputs.columns.push_back(Values(a));
  CheckRequest request =
      MakeCheckRequest(op, format, std::move(inputs), Values(outputs), label, models);
  request.threads = threads;
  CheckResult result;
  {
    py::gil_scoped_release release;
    result = RunCheck(request);
  }
  return CheckJson(request, result).dump();
}

// Two sides' outputs at the same inputs (ulpgate.compare): the report of
// `compare --json`'s result (suites/investigate/compare.h).
std::string Compare(const std::string& op_name, const std::string& dtype,
                    const std::vector<py::array_t<float, py::array::c_style | py::array::forcecast>>& operands,
                    const py::array_t<float, py::array::c_style | py::array::forcecast>& a,
                    const py::array_t<float, py::array::c_style | py::array::forcecast>& b,
                    const std::vector<std::string>& labels, const std::vector<std::string>& doors,
                    const std::vector<std::string>& models, unsigned threads) {
  const ElementwiseOpInfo& op = OpNamed(op_name);
  const FloatFormat& format = FormatNamed(op, dtype);
  CompareRequest request;
  request.op = &op;
  request.format = &format;
  request.inputs.operand_names = op.operand_names();
  request.inputs.source = "python";
  for (const auto& x : operands) request.inputs.columns.push_back(Values(x));
  if (request.inputs.columns.size() != op.arity()) {
    throw InputError(fmt::format("{} takes {} operands, given {}", op.name, op.arity(), request.inputs.columns.size()));
  }
  for (const auto& column : request.inputs.columns) {
    if (column.size() != request.inputs.size()) throw InputError("the operands' lengths differ");
  }
  request.a.outputs = Values(a);
  request.b.outputs = Values(b);
  request.a.label = labels.size() > 0 ? labels[0] : "a";
  request.b.label = labels.size() > 1 ? labels[1] : "b";
  request.a.door = doors.size() > 0 ? doors[0] : "python";
  request.b.door = doors.size() > 1 ? doors[1] : "python";
  request.a.spec = request.a.label;
  request.b.spec = request.b.label;
  request.models = models;
  request.threads = threads;
  CompareResult result;
  {
    py::gil_scoped_release release;
    result = RunCompare(request);
  }
  return CompareJson(request, result).dump();
}

// The callable's kernel: operands in storage lanes to numpy arrays, its
// result back. Called from the sweep's threads, so it takes the GIL; an
// exception in Python ends the sweep with its message.
PluginCall CallableKernel(py::function kernel, const FloatFormat& format, size_t arity) {
  const bool f32 = IsBinary32(format);
  // The registered target outlives the interpreter (it is released with the
  // process's statics, after Python has finalized), so the callable is held
  // by a reference that is never dropped.
  const auto* held = new py::function(std::move(kernel));
  return [held, f32, arity](const void* const* in, void* out, size_t n) {
    py::gil_scoped_acquire gil;
    py::list args;
    for (size_t k = 0; k < arity; ++k) {
      if (f32) {
        args.append(py::array_t<float>(n, static_cast<const float*>(in[k])));
      } else {
        args.append(py::array_t<uint16_t>(n, static_cast<const uint16_t*>(in[k])));
      }
    }
    py::object result = (*held)(*args);
    if (f32) {
      auto y = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(result);
      if (!y || static_cast<size_t>(y.size()) != n) {
        throw std::runtime_error("the kernel returned " + std::string(py::str(result.get_type())) +
                                 ", not " + std::to_string(n) + " float32 values");
      }
      std::memcpy(out, y.data(), n * sizeof(float));
    } else {
      auto y = py::array_t<uint16_t, py::array::c_style | py::array::forcecast>::ensure(result);
      if (!y || static_cast<size_t>(y.size()) != n) {
        throw std::runtime_error("the kernel returned " + std::string(py::str(result.get_type())) +
                                 ", not " + std::to_string(n) + " uint16 bit patterns");
      }
      std::memcpy(out, y.data(), n * sizeof(uint16_t));
    }
  };
}

std::string Sweep(py::function kernel, const std::string& op_name, const std::string& dtype,
                  const std::string& name, const std::string& variant, const std::string& claim,
                  const std::vector<float>& fixed, const std::string& over, uint64_t begin,
                  uint64_t end, unsigned threads, py::object progress) {
  const ElementwiseOpInfo& op = OpNamed(op_name);
  const FloatFormat& format = FormatNamed(op, dtype);
  if (op.arity() != 2) throw py::value_error(op_name + " has not two operands: a sweep takes two");
  LoadedPlugin plugin;
  plugin.path = "python";
  plugin.target.name = name;
  PluginKernel k;
  k.op = op_name;
  k.variant = variant;
  k.format = &format;
  if (!claim.empty()) {
    const std::vector<std::string> names = ModelNames(op, format);
    if (std::find(names.begin(), names.end(), claim) == names.end()) {
      std::string known;
      for (const std::string& n : names) known += (known.empty() ? "" : ", ") + n;
      throw py::value_error("claim: unknown model '" + claim + "' of " + op_name + " in " + dtype +
                            " (" + known + ")");
    }
    // A built-in model: compared by name; its program where it has one.
    k.model.name = claim;
    for (ModelProgram& m : ModelPrograms(op, format)) {
      if (m.name == claim) k.model = m;
    }
  }
  k.call = CallableKernel(kernel, format, op.arity());
  plugin.kernels.push_back(std::move(k));
  // One target per sweep: a name already registered (an earlier sweep of
  // this process) gets a number.
  const TargetInfo* target = nullptr;
  for (int i = 1; target == nullptr; ++i) {
    try {
      if (i > 1) plugin.target.name = name + "_" + std::to_string(i);
      target = RegisterPluginKernels(plugin);
    } catch (const InputError&) {
      if (i > 1000) throw;
    }
  }
  SweepOptions options;
  options.op = &op;
  const std::array<std::string, 2> operands = {op.operand_names()[0], op.operand_names()[1]};
  const SweepDomain::Kind kind = fixed.empty() ? SweepDomain::Kind::kPairs
                                 : over == operands[0] ? SweepDomain::Kind::kOverGrad
                                                       : SweepDomain::Kind::kOverT;
  options.domain = MakeSweepDomain(format, kind, fixed, operands);
  options.begin = begin;
  options.end = end == 0 ? options.domain.size() : end;
  options.targets = {target};
  options.threads = threads;
  // progress(done, total), called on this thread between blocks: an
  // exception in it may not cross the sweep's threads, so it is kept, no
  // more calls are made, and it is raised when the sweep has ended.
  std::unique_ptr<py::error_already_set> progress_error;
  if (!progress.is_none()) {
    options.progress = [&progress, &progress_error](uint64_t done, uint64_t total) {
      py::gil_scoped_acquire gil;
      if (progress_error) return;
      try {
        progress(done, total);
      } catch (py::error_already_set& e) {
        progress_error = std::make_unique<py::error_already_set>(std::move(e));
      }
    };
  }
  SweepResult result;
  {
    py::gil_scoped_release release;
    result = RunSweep(options);
  }
  if (progress_error) throw std::move(*progress_error);
  return SweepJson(result).dump();
}


// A cast op's source and destination, or ValueError naming what is known.
std::pair<const FloatFormat*, const FloatFormat*> CastNamed(const std::string& op, const std::string& dtype) {
  const FloatFormat* from = CastOpSource(op);
  if (from == nullptr) throw py::value_error("'" + op + "' is no cast op (cast_f32, cast_bf16, cast_f16)");
  const FloatFormat* to = FindCastDestination(dtype);
  if (to == nullptr) {
    std::string known;
    for (const FloatFormat* f : kCastDestinations) known += (known.empty() ? "" : ", ") + std::string(f->name);
    throw py::value_error("dtype '" + dtype + "': " + op + " casts to " + known);
  }
  return {from, to};
}

using Patterns = py::array_t<uint32_t, py::array::c_style | py::array::forcecast>;
using Bytes = py::array_t<uint8_t, py::array::c_style | py::array::forcecast>;

std::string CastInputText(const CastInputs& inputs, size_t i) {
  const double v = inputs.values[i];
  return BitsText(*inputs.from, inputs.patterns[i]) + " = " +
         (std::isnan(v) ? std::string("nan") : fmt::format("{:a}", v));
}

std::string CastCodeText(const FloatFormat& to, uint64_t code) {
  const double v = DecodeBits(to, code);
  return fmt::format("{} ({})", BitsText(to, code), std::isnan(v) ? std::string("nan") : fmt::format("{:g}", v));
}

// A policy's fit as a dict, its first mismatches with the inputs, the outputs
// and the policy's codes in the CLI's words.
py::dict FitDict(const CastPolicyFit& fit, const CastInputs& inputs, const CastModels& models,
                 const std::vector<uint8_t>& codes, const FloatFormat& to) {
  size_t p = 0;
  while (p < models.policies.size() && !(models.policies[p] == fit.policy)) ++p;
  py::list first;
  for (size_t i : fit.first_mismatches) {
    py::dict m;
    m["index"] = i;
    m["input"] = CastInputText(inputs, i);
    m["output"] = CastCodeText(to, codes[i]);
    m["model"] = p < models.policies.size() ? CastCodeText(to, models.codes[p][i]) : std::string("?");
    first.append(m);
  }
  py::dict d;
  d["name"] = fit.name;
  d["mismatches"] = fit.mismatches;
  d["first"] = first;
  return d;
}

// Codes of a cast's outputs (one a byte, unpacked) at source patterns, measured
// against every policy of the catalogue: the CLI's `check --op cast_*`.
py::dict CheckCast(const std::string& op, const std::string& dtype, const Patterns& patterns,
                   const Bytes& codes, const std::string& claimed, const std::string& suite,
                   unsigned threads) {
  const auto [from, to] = CastNamed(op, dtype);
  if (patterns.size() != codes.size()) {
    throw py::value_error(std::to_string(codes.size()) + " outputs for " + std::to_string(patterns.size()) +
                          " inputs");
  }
  const uint64_t from_mask = from->bits >= 32 ? ~uint32_t{0} : (uint32_t{1} << from->bits) - 1;
  std::vector<uint32_t> source(patterns.data(), patterns.data() + patterns.size());
  for (size_t i = 0; i < source.size(); ++i) {
    if ((source[i] & ~from_mask) != 0) {
      throw py::value_error("input " + std::to_string(i) + " is not a " + from->name + " pattern");
    }
  }
  std::vector<uint8_t> out(codes.data(), codes.data() + codes.size());
  const unsigned to_mask = (1u << to->bits) - 1;
  for (size_t i = 0; i < out.size(); ++i) {
    if ((out[i] & ~to_mask) != 0) {
      throw py::value_error("output " + std::to_string(i) + ": " + std::to_string(out[i]) + " is not a " +
                            std::to_string(to->bits) + "-bit " + to->name + " code");
    }
  }
  std::optional<CastPolicy> claim;
  if (!claimed.empty()) {
    claim = ParseCastPolicy(claimed);
    if (!claim || !CastPolicyProblem(*from, *to, *claim).empty()) {
      std::string known;
      for (const CastPolicy& c : CastPolicies(*from, *to)) known += (known.empty() ? "" : ", ") + c.Name();
      throw py::value_error("policy '" + claimed + "': no policy of a cast from " + from->name + " to " +
                            to->name + " (" + known + ")");
    }
  }
  CastInputs inputs;
  inputs.from = from;
  inputs.Add(suite, source);
  CastModels models;
  CastCaseResult r;
  {
    py::gil_scoped_release release;
    models = EvaluateCastModels(*from, *to, inputs, threads);
    r = MeasureCastOutputs(*to, inputs, models, std::move(out), claim);
  }
  py::dict d;
  d["op"] = op;
  d["from"] = std::string(from->name);
  d["to"] = std::string(to->name);
  d["n"] = r.n;
  d["policies"] = models.policies.size();
  d["followed"] = r.followed;
  py::list fits;
  for (const CastPolicyFit& f : r.fits) fits.append(FitDict(f, inputs, models, r.codes, *to));
  d["fits"] = fits;
  d["claimed"] = r.claimed;
  d["claimed_fit"] = r.claimed_fit ? py::object(FitDict(*r.claimed_fit, inputs, models, r.codes, *to)) : py::none();
  d["max_ulp"] = r.max_ulp;
  d["max_ulp_index"] = r.max_ulp_index;
  d["max_ulp_input"] = r.in_range == 0 ? std::string() : CastInputText(inputs, r.max_ulp_index);
  d["in_range"] = r.in_range;
  d["correctly_rounded"] = r.correctly_rounded;
  d["special"] = r.special;
  return d;
}

// The source patterns of one of the cast suites (boundary, random, scaled).
py::array_t<uint32_t> CastSuite(const std::string& op, const std::string& dtype, const std::string& suite,
                                uint64_t seed, uint64_t n) {
  const auto [from, to] = CastNamed(op, dtype);
  const std::vector<uint32_t> p = GenerateCastSuite(*from, *to, suite, seed, n);
  py::array_t<uint32_t> out(p.size());
  std::copy(p.begin(), p.end(), out.mutable_data());
  return out;
}

// Block-quantized outputs of a [rows, cols] float32 tensor measured against
// every (scale rule, element policy) pair (MX), or torchao's nvfp4_quantize at
// the given tensor scale (NVFP4): the CLI's `blockquant --check`.
py::dict CheckBlockQuant(const std::string& spec_name, const py::array_t<float, py::array::c_style | py::array::forcecast>& x,
                         size_t rows, size_t cols, const std::string& axis, const Bytes& scales,
                         const Bytes& codes, float tensor_scale) {
  const BlockSpec* spec = FindBlockSpec(spec_name);
  if (spec == nullptr) {
    std::string known;
    for (const BlockSpec* s : BlockSpecs()) known += (known.empty() ? "" : ", ") + std::string(s->name);
    throw py::value_error("unknown spec '" + spec_name + "' (" + known + ")");
  }
  if (axis != "rows" && axis != "columns") throw py::value_error("axis: 'rows' or 'columns', not '" + axis + "'");
  BlockShape shape{rows, cols, axis == "rows" ? BlockAxis::kRows : BlockAxis::kColumns, spec->block_size};
  const std::string problem = shape.Problem();
  if (!problem.empty()) throw py::value_error(problem);
  if (static_cast<size_t>(x.size()) != rows * cols || static_cast<size_t>(codes.size()) != rows * cols) {
    throw py::value_error("x and codes must hold rows * cols elements");
  }
  if (static_cast<size_t>(scales.size()) != shape.blocks()) {
    throw py::value_error(std::to_string(scales.size()) + " scales for " + std::to_string(shape.blocks()) +
                          " blocks");
  }
  const std::vector<uint8_t> s(scales.data(), scales.data() + scales.size());
  const std::vector<uint8_t> c(codes.data(), codes.data() + codes.size());
  py::dict d;
  d["spec"] = std::string(spec->name);
  d["blocks"] = shape.blocks();
  if (spec->tensor_scale) {
    BlockQuantized want;
    {
      py::gil_scoped_release release;
      want = Nvfp4Quantize(CastPolicy{}, x.data(), shape, tensor_scale);
    }
    py::list exact;
    std::optional<size_t> first;
    size_t matched = 0;
    for (size_t b = 0; b < shape.blocks(); ++b) {
      bool same = want.scales[b] == s[b];
      for (int j = 0; j < shape.block_size; ++j) {
        const size_t e = shape.ElementIndex(b, j);
        same = same && want.codes[e] == c[e];
      }
      if (same) {
        ++matched;
      } else if (!first) {
        first = b;
      }
    }
    if (!first) exact.append("nvfp4_quantize/nearest_even.saturate");
    d["exact"] = exact;
    d["nearest"] = "nvfp4_quantize/nearest_even.saturate";
    d["blocks_matched"] = matched;
    d["first_broken_block"] = first ? py::object(py::int_(*first)) : py::none();
    d["why"] = first ? "block " + std::to_string(*first) + " differs from nvfp4_quantize's" : std::string();
    return d;
  }
  BlockNaming naming;
  {
    py::gil_scoped_release release;
    naming = NameScaleRules(*spec, x.data(), shape, s, c);
  }
  py::list exact;
  for (const BlockModel& m : naming.exact) exact.append(m.Name());
  d["exact"] = exact;
  d["nearest"] = naming.nearest.model.Name();
  d["blocks_matched"] = naming.nearest.blocks_matched;
  d["first_broken_block"] =
      naming.nearest.first_broken_block ? py::object(py::int_(*naming.nearest.first_broken_block)) : py::none();
  d["why"] = naming.nearest.why;
  return d;
}

// The exact value of the op at one input, as a hex float (rounded to the
// oracle's precision where the op's definition is not exact in binary), or
// with digits > 0 as a decimal of that many significant digits.
std::string Exact(const std::string& op_name, const std::vector<float>& operands, int digits) {
  const ElementwiseOpInfo& op = OpNamed(op_name);
  if (operands.size() != op.arity()) throw py::value_error(op_name + " takes " + std::to_string(op.arity()) + " operands");
  const MpfrNumber exact = OracleOf(op).Exact(operands.data());
  return digits > 0 ? exact.ToDecimal(digits) : exact.ToHexExact();
}

using Floats = py::array_t<float, py::array::c_style | py::array::forcecast>;

// The door a matrix product callable goes through, from the Python side's
// arguments; ValueError for an unknown dtype or kind. Built with the GIL held.
PythonDotDoor::Options DoorOptions(const std::string& dtype, const std::string& out_dtype,
                                   const std::string& tensors, const std::string& name, size_t max_k,
                                   size_t max_rows) {
  PythonDotDoor::Options options;
  options.name = name;
  options.operands = &AnyFormatNamed(dtype);
  options.outputs = &AnyFormatNamed(out_dtype);
  try {
    options.kind = ParseArrayKind(tensors);
  } catch (const std::invalid_argument& e) {
    throw py::value_error(e.what());
  }
  options.max_k = max_k;
  options.max_rows = max_rows;
  return options;
}

// A matrix product callable called once through its DotDoor, as reveal and
// invariance call it: the GIL released around Multiply, which takes it back.
// a [m, k] and b [n, k] hold values of `dtype`; returns c [m, n].
py::array_t<float> DoorMultiply(py::object fn, const Floats& a, const Floats& b, const std::string& dtype,
                                const std::string& out_dtype, const std::string& tensors,
                                const std::string& name) {
  if (a.ndim() != 2 || b.ndim() != 2 || a.shape(1) != b.shape(1)) {
    throw py::value_error("a [m, k] and b [n, k]: two matrices with the same k");
  }
  const PythonDotDoor::Options options = DoorOptions(dtype, out_dtype, tensors, name, 0, 0);
  for (const Floats* m : {&a, &b}) {
    for (py::ssize_t i = 0; i < m->size(); ++i) {
      if (!IsRepresentable(*options.operands, m->data()[i])) {
        throw py::value_error("element " + std::to_string(i) + " is not a " + dtype + " value");
      }
    }
  }
  const DotShape shape{static_cast<size_t>(a.shape(0)), static_cast<size_t>(b.shape(0)),
                       static_cast<size_t>(a.shape(1))};
  PythonDotDoor door(std::move(fn), options);
  py::array_t<float> c({static_cast<py::ssize_t>(shape.m), static_cast<py::ssize_t>(shape.n)});
  float* out = c.mutable_data();
  {
    py::gil_scoped_release release;
    door.Multiply(shape, a.data(), b.data(), out);
  }
  return c;
}

const ReductionOpInfo& ReductionOpNamed(const std::string& name) {
  const ReductionOpInfo* op = FindReductionOp(name);
  if (op == nullptr) {
    std::string known;
    for (const ReductionOpInfo& o : ReductionOps()) known += (known.empty() ? "" : ", ") + std::string(o.name);
    throw py::value_error("unknown reduction op '" + name + "' (" + known + ")");
  }
  return *op;
}

// The formats a reduction's suites and kernels take (f32 and the 16-bit ones).
const FloatFormat& ReductionFormatNamed(const ReductionOpInfo& op, const std::string& name) {
  const FloatFormat* f = FindFormat(name);
  if (f == nullptr || !(IsBinary32(*f) || NarrowFormatIndex(f->name) >= 0)) {
    throw py::value_error("dtype '" + name + "': " + std::string(op.name) + " runs in f32, bf16, f16");
  }
  return *f;
}

// The reduction ops as the table gives them: name, definition, operands, the
// variants' names, the extents of a shape (["batch", "in", "out"] or ["N"])
// and the suites.
py::list ReductionOpsList() {
  py::list ops;
  for (const ReductionOpInfo& op : ReductionOps()) {
    py::dict d;
    d["name"] = std::string(op.name);
    d["definition"] = std::string(op.definition);
    d["operands"] = op.operands;
    std::vector<std::string> variants;
    for (const ReductionVariantInfo& v : op.variants) variants.emplace_back(v.name);
    d["variants"] = variants;
    d["shape_rank"] = op.extents.size();
    d["default_shape"] = ShapeText(op, RunShape(op, ""));
    ops.append(d);
  }
  return ops;
}

py::list ReductionSuitesList() {
  py::list suites;
  for (const SuiteInfo& s : ReductionSuites()) {
    py::dict d;
    d["name"] = s.name;
    d["description"] = s.description;
    d["default_n"] = s.default_n;
    suites.append(d);
  }
  return suites;
}

// A suite's instances in a format: `ulpgate run --op OP --suite S --seed
// SEED --shape SHAPE`'s, n of them (0: the suite's count).
ReductionInputSet ReductionSuiteInputs(const ReductionOpInfo& op, const FloatFormat& format,
                                       const std::string& shape_text, const std::string& suite, uint64_t seed,
                                       uint64_t n) {
  const SuiteInfo* info = nullptr;
  std::string known;
  for (const SuiteInfo& s : ReductionSuites()) {
    known += (known.empty() ? "" : ", ") + s.name;
    if (s.name == suite) info = &s;
  }
  if (info == nullptr) {
    throw py::value_error("unknown suite '" + suite + "' of " + std::string(op.name) + " (" + known + ")");
  }
  const ReductionShape shape = RunShape(op, shape_text);
  return GenerateReductionSuite(op, shape, suite, seed, n == 0 ? info->default_n : n, format);
}

// Instance i's operands as arrays or tensors of the format, by operand name.
py::dict InstanceArrays(const ReductionInputSet& inputs, const ReductionOpInfo& op, size_t i, ArrayKind kind) {
  const auto dims = ReductionOperandShapes(*inputs.op, inputs.shape);
  py::dict d;
  for (size_t k = 0; k < op.operands.size(); ++k) {
    d[py::str(op.operands[k])] = MakePythonArray(inputs.instances[i].operands[k].data(), dims[k], *inputs.format, kind);
  }
  return d;
}

// The instances of a suite, each a dict of operand arrays (what a callable
// given to check receives, by name).
py::list ReductionInputs(const std::string& op_name, const std::string& dtype, const std::string& shape,
                         const std::string& suite, uint64_t seed, uint64_t n, const std::string& tensors) {
  const ReductionOpInfo& op = ReductionOpNamed(op_name);
  const ReductionInputSet inputs = ReductionSuiteInputs(op, ReductionFormatNamed(op, dtype), shape, suite, seed, n);
  const ArrayKind kind = ParseArrayKind(tensors);
  py::list out;
  for (size_t i = 0; i < inputs.instances.size(); ++i) out.append(InstanceArrays(inputs, op, i, kind));
  return out;
}

std::string ReductionRecord(const ReductionInputSet& inputs, const std::vector<std::vector<float>>& outputs,
                            const std::string& label, unsigned threads) {
  CaseResult r;
  {
    py::gil_scoped_release release;
    r = RunReductionCheck(inputs, outputs, label, threads);
  }
  nlohmann::ordered_json record = ReductionCheckJson(r, inputs);
  record["label"] = label;
  return record.dump();
}

// A callable's outputs on a suite's instances, measured as `ulpgate check`
// measures a reduction's: fn(*operands) once per instance, with the operands
// in the op's order as arrays (or tensors) of the format, returning the op's
// output shape in the format. Whatever fn raises propagates; a result of the
// wrong type, dtype or shape is a ValueError naming the instance.
std::string CheckReductionCallable(py::object fn, const std::string& op_name, const std::string& dtype,
                                   const std::string& shape, const std::string& suite, uint64_t seed, uint64_t n,
                                   const std::string& label, const std::string& tensors, unsigned threads) {
  const ReductionOpInfo& op = ReductionOpNamed(op_name);
  const ReductionInputSet inputs = ReductionSuiteInputs(op, ReductionFormatNamed(op, dtype), shape, suite, seed, n);
  const ArrayKind kind = ParseArrayKind(tensors);
  const std::vector<size_t> out_dims = ReductionOutputShape(*inputs.op, inputs.shape);
  std::vector<std::vector<float>> outputs;
  for (size_t i = 0; i < inputs.instances.size(); ++i) {
    const py::dict operands = InstanceArrays(inputs, op, i, kind);
    py::list args;
    for (const std::string& name : op.operands) args.append(operands[py::str(name)]);
    const py::object result = fn(*args);
    try {
      outputs.push_back(PythonArrayValues(result, out_dims, *inputs.format,
                                          fmt::format("{} of instance {} returned", label, i)));
    } catch (const PythonArrayError& e) {
      throw py::value_error(e.what());
    }
  }
  return ReductionRecord(inputs, outputs, label, threads);
}

// A float32 array with its shape as the file reader takes one.
NumpyArray ArrayOf(const std::string& name, const Floats& a) {
  NumpyArray array;
  array.name = name;
  array.dtype = "<f4";
  for (py::ssize_t d = 0; d < a.ndim(); ++d) array.shape.push_back(static_cast<size_t>(a.shape(d)));
  const auto* bytes = reinterpret_cast<const uint8_t*>(a.data());
  array.data.assign(bytes, bytes + a.size() * sizeof(float));
  return array;
}

// Outputs made elsewhere at operands given as arrays (shape read from them, a
// leading dimension of instances allowed), as `ulpgate check --inputs
// F.npz --outputs G.npy` reads them from files.
std::string CheckReductionArrays(const std::string& op_name, const std::string& dtype,
                                 const std::vector<std::pair<std::string, Floats>>& operands,
                                 const Floats& outputs, const std::string& label, unsigned threads) {
  const ReductionOpInfo& op = ReductionOpNamed(op_name);
  const FloatFormat& format = ReductionFormatNamed(op, dtype);
  std::vector<NumpyArray> arrays;
  for (const auto& [name, a] : operands) arrays.push_back(ArrayOf(name, a));
  const ReductionInputSet inputs = ReductionInputsFromArrays(op, arrays, format, "python");
  const std::vector<std::vector<float>> values =
      ReductionOutputsFromArray(op, inputs, ArrayOf(label, outputs), "python");
  return ReductionRecord(inputs, values, label, threads);
}

// `ulpgate invariance` of a callable (suites/reveal/invariance.h): the probe
// row alone and in batches, at other positions, alignments, thread counts and
// run to run. The GIL is released while it runs; the door takes it for each
// call. progress(dimension) is called as each dimension starts. With
// `trees`, where the batch size changes the bits, reveal's trees of the
// probe's first output at the last size that keeps them and the first that
// changes them.
std::string Invariance(py::object fn, const std::string& dtype, const std::string& out_dtype,
                       const std::string& tensors, const std::string& name, size_t k, size_t n, size_t max_batch,
                       uint64_t seed, size_t repeats, const std::vector<unsigned>& threads, double time_budget,
                       size_t max_k, size_t max_rows, py::object progress, bool trees) {
  PythonDotDoor door(std::move(fn), DoorOptions(dtype, out_dtype, tensors, name, max_k, max_rows));
  InvarianceOptions options;
  options.k = k;
  options.n = n;
  options.max_batch = max_batch;
  options.seed = seed;
  options.repeats = repeats;
  options.threads = threads;
  options.time_budget_seconds = time_budget;
  std::function<void(const std::string&)> told;
  if (!progress.is_none()) {
    told = [&progress](const std::string& dimension) {
      py::gil_scoped_acquire gil;
      progress(dimension);
    };
  }
  InvarianceReport report;
  std::optional<BatchTrees> batch_trees;
  {
    py::gil_scoped_release release;
    try {
      report = CheckInvariance(door, options, told);
    } catch (const std::invalid_argument& e) {
      throw InputError(e.what());
    }
    if (trees) batch_trees = RevealBatchTrees(door, report);
  }
  return InvarianceJson(report, batch_trees).dump();
}

// A tree's structure alone: leaves' rounding marks and nodes' arithmetic
// dropped, children in term order, so that trees that add alike compare equal.
void StripArithmetic(SumNode* node) {
  node->rounded = false;
  node->arith = NodeArith{};
  for (SumNode& c : node->children) StripArithmetic(&c);
}

nlohmann::ordered_json TreeRecord(const SummationTree& tree) {
  nlohmann::ordered_json j;
  j["text"] = tree.Text();
  j["json"] = tree.Json();
  j["k"] = tree.k();
  j["internal_nodes"] = tree.InternalNodes();
  j["depth"] = tree.Depth();
  j["max_fan_in"] = tree.MaxFanIn();
  j["known_shape"] = KnownShapeName(tree);
  return j;
}

nlohmann::ordered_json CostRecord(const RevealCost& cost) {
  return {{"calls", cost.calls}, {"probes", cost.probes}, {"seconds", cost.seconds}};
}

// `reveal` of a callable (suites/reveal/reveal.h): the summation tree of
// output (row, col) of calls of m x n x k, then (fingerprint) each node's
// arithmetic and each product's rounding, then (check_outputs > 0) the model
// checked bit for bit on that many outputs of random operands. Outputs that
// no tree of roundings gives (a correctly rounded sum, say) are no error:
// the record says so in "not_a_tree", in reveal's words. A DotDoorError (the
// callable raised, or returned the wrong dtype or shape) propagates.
std::string Reveal(py::object fn, const std::string& dtype, const std::string& out_dtype, const std::string& tensors,
                   const std::string& name, size_t m, size_t n, size_t k, size_t row, size_t col, bool batch,
                   bool fingerprint, uint64_t check_outputs, uint64_t seed, size_t max_k, size_t max_rows) {
  PythonDotDoor door(std::move(fn), DoorOptions(dtype, out_dtype, tensors, name, max_k, max_rows));
  const DotShape shape{m, n, k};
  RevealOptions options;
  options.batch = batch;
  nlohmann::ordered_json j;
  j["door"] = door.Name();
  j["operand_format"] = door.OperandFormat().name;
  j["output_format"] = door.OutputFormat().name;
  j["shape"] = {{"m", m}, {"n", n}, {"k", k}};
  j["row"] = row;
  j["col"] = col;
  {
    py::gil_scoped_release release;
    std::optional<TreeReveal> revealed;
    try {
      revealed = RevealTree(door, shape, row, col, options);
    } catch (const DotDoorError&) {
      throw;
    } catch (const std::invalid_argument& e) {
      throw InputError(e.what());
    } catch (const std::runtime_error& e) {
      j["not_a_tree"] = e.what();
    }
    if (revealed) {
      j["not_a_tree"] = nullptr;
      j["tree"] = TreeRecord(revealed->tree);
      j["probes"] = revealed->probes;
      j["tree_cost"] = CostRecord(revealed->cost);
      SummationTree model = revealed->tree;
      if (fingerprint) {
        try {
          const AccumulatorFingerprint fp = RevealFingerprint(door, shape, row, col, revealed->tree, options);
          model = fp.model;
          nlohmann::ordered_json f;
          f["model"] = TreeRecord(fp.model);
          f["products_can_round"] = fp.products_can_round;
          f["rounded_products"] = fp.rounded_products;
          f["unobservable_products"] = fp.unobservable_products;
          f["node_classes"] = nlohmann::ordered_json::array();
          for (const NodeClass& c : fp.node_classes) {
            f["node_classes"].push_back({{"arith", ArithText(c.arith)},
                                         {"binary32", c.arith.IsBinary32()},
                                         {"bits", c.arith.bits},
                                         {"aligned", c.arith.aligned},
                                         {"toward_zero", c.arith.rounding == NodeRounding::kTowardZero},
                                         {"nodes", c.nodes}});
          }
          f["normalization_probed"] = fp.normalization_probed;
          f["not_normalized"] = fp.not_normalized;
          f["low_precision_blocks"] = fp.low_precision_blocks;
          f["promote_every"] = fp.promote_every;
          f["parts"] = fp.parts;
          f["shape"] = fp.shape;
          f["description"] = DescribeFingerprint(fp);
          f["cost"] = CostRecord(fp.cost);
          j["fingerprint"] = f;
        } catch (const DotDoorError&) {
          throw;
        } catch (const std::runtime_error& e) {
          j["fingerprint"] = {{"error", e.what()}};
        }
      }
      if (check_outputs > 0) {
        const ModelCheck c = CheckModel(door, shape, model, check_outputs, seed);
        j["model_check"] = {{"outputs", c.outputs},         {"mismatches", c.mismatches},
                            {"first_mismatch", c.first_mismatch}, {"calls", c.calls},
                            {"seconds", c.seconds}};
      }
    }
  }
  j["calls"] = door.calls();
  return j.dump();
}

// A tree's text, parsed and reduced to its structure ("((0+1)+2)" from
// "((0r+1)+2)" or "((1+0)@t14+2)"); ValueError naming the position of an
// error. With `builder` ("sequential", "sequential_fused", "pairwise",
// "lane_parallel"), the tree of ulpgate's own schedule of k terms instead.
std::string TreeText(const std::string& text, const std::string& builder, size_t k, size_t lanes,
                     bool structure_only) {
  SummationTree tree;
  try {
    if (builder.empty()) {
      tree = ParseSummationTree(text);
    } else if (builder == "sequential" || builder == "sequential_fused") {
      tree = SequentialTree(k, builder == "sequential_fused");
    } else if (builder == "pairwise") {
      tree = PairwiseTree(k);
    } else if (builder == "lane_parallel" || builder == "lane_parallel_fused") {
      tree = LaneParallelTree(k, lanes, builder == "lane_parallel_fused");
    } else {
      throw std::invalid_argument("unknown tree '" + builder +
                                  "' (sequential, sequential_fused, pairwise, lane_parallel, lane_parallel_fused)");
    }
  } catch (const std::invalid_argument& e) {
    throw py::value_error(e.what());
  }
  if (structure_only) StripArithmetic(&tree.mutable_root());
  tree.Canonicalize();
  return tree.Text();
}

// "0.1.0": the project's version, as `ulpgate --version` says it.
std::string Version() {
  const std::string tool = ToolVersion();
  const size_t space = tool.rfind(' ');
  return space == std::string::npos ? tool : tool.substr(space + 1);
}

}  // namespace
}  // namespace ulpgate

PYBIND11_MODULE(_ulpgate, m) {
  m.doc() = "ulpgate's engine for the Python package (use `import ulpgate`).";
  py::register_exception<ulpgate::InputError>(m, "InputError", PyExc_ValueError);
  py::register_exception<ulpgate::KernelFaultError>(m, "KernelFault", PyExc_RuntimeError);
  py::register_exception<ulpgate::DotDoorError>(m, "DotDoorError", PyExc_RuntimeError);
  m.def("format_ulp", &ulpgate::FormatUlp, py::arg("value"),
        "A ULP error or bound fraction to 4 digits, rounded up: never below its value.");
  m.def("ops", &ulpgate::OpsList, "The elementwise ops: name, operands, definition.");
  m.def("formats_json", &ulpgate::FormatsJsonText,
        "Every registered format's traits, as JSON (`ulpgate list --json`'s formats).");
  m.def("decode", &ulpgate::Decode, py::arg("codes"), py::arg("format"),
        "The values (float64, exact) of codes of a registered format.");
  m.def("encode", &ulpgate::Encode, py::arg("values"), py::arg("format"),
        "The codes (uint64) of values of a registered format; ValueError for another value.");
  m.def("round", &ulpgate::Round, py::arg("values"), py::arg("format"), py::arg("toward_zero") = false,
        "Each float64 rounded once to a registered format (nearest even, or toward zero).");
  m.attr("__version__") = ulpgate::Version();
  m.def("exact", &ulpgate::Exact, py::arg("op"), py::arg("operands"), py::arg("digits") = 0,
        "The exact value of the op at one input (binary32 operands), as a hex float (or a "
        "decimal of `digits` significant digits).");
  m.def("check", &ulpgate::Check, py::arg("op"), py::arg("dtype"), py::arg("operands"),
        py::arg("outputs"), py::arg("label"), py::arg("models"), py::arg("threads") = 0,
        "Measures outputs against the exact values and every model; returns check's JSON record.");
  m.def("compare", &ulpgate::Compare, py::arg("op"), py::arg("dtype"), py::arg("operands"), py::arg("a"),
        py::arg("b"), py::arg("labels"), py::arg("doors"), py::arg("models"), py::arg("threads"),
        "Two sides' outputs at the same inputs: compare's JSON result.");
  m.def("check_cast", &ulpgate::CheckCast, py::arg("op"), py::arg("dtype"), py::arg("patterns"),
        py::arg("codes"), py::arg("claimed") = "", py::arg("suite") = "python", py::arg("threads") = 0,
        "Measures a cast's codes at source patterns against every policy of the cast model.");
  m.def("cast_suite", &ulpgate::CastSuite, py::arg("op"), py::arg("dtype"), py::arg("suite"),
        py::arg("seed") = 1, py::arg("n") = 0, "The source patterns of a cast suite.");
  m.def("check_blockquant", &ulpgate::CheckBlockQuant, py::arg("spec"), py::arg("x"), py::arg("rows"),
        py::arg("cols"), py::arg("axis"), py::arg("scales"), py::arg("codes"),
        py::arg("tensor_scale") = 1.0f,
        "Names the (scale rule, element policy) pairs that reproduce block-quantized outputs.");
  m.def("sweep", &ulpgate::Sweep, py::arg("kernel"), py::arg("op"), py::arg("dtype"),
        py::arg("name"), py::arg("variant"), py::arg("claim"), py::arg("fixed"), py::arg("over"),
        py::arg("begin"), py::arg("end"), py::arg("threads") = 0, py::arg("progress") = py::none(),
        "Sweeps a callable over a domain, calling progress(done, total) between blocks; returns "
        "sweep's JSON report.");
  m.def("door_multiply", &ulpgate::DoorMultiply, py::arg("fn"), py::arg("a"), py::arg("b"), py::arg("dtype"),
        py::arg("out_dtype"), py::arg("tensors") = "numpy", py::arg("name") = "fn",
        "Calls a matrix product callable fn(a, b) -> a @ b.T once through its DotDoor; DotDoorError "
        "where it raises or returns the wrong dtype or shape.");
  m.def("invariance", &ulpgate::Invariance, py::arg("fn"), py::arg("dtype"), py::arg("out_dtype"),
        py::arg("tensors"), py::arg("name"), py::arg("k"), py::arg("n"), py::arg("max_batch"), py::arg("seed"),
        py::arg("repeats"), py::arg("threads"), py::arg("time_budget"), py::arg("max_k") = 0,
        py::arg("max_rows") = 0, py::arg("progress") = py::none(), py::arg("trees") = true,
        "Batch invariance and determinism of a matrix product callable; returns invariance's JSON report.");
  m.def("reveal", &ulpgate::Reveal, py::arg("fn"), py::arg("dtype"), py::arg("out_dtype"), py::arg("tensors"),
        py::arg("name"), py::arg("m"), py::arg("n"), py::arg("k"), py::arg("row") = 0, py::arg("col") = 0,
        py::arg("batch") = true, py::arg("fingerprint") = true, py::arg("check_outputs") = 0,
        py::arg("seed") = 1, py::arg("max_k") = 0, py::arg("max_rows") = 0,
        "The summation tree, accumulator fingerprint and model check of a matrix product callable; returns JSON.");
  m.def("tree_text", &ulpgate::TreeText, py::arg("text") = "", py::arg("builder") = "", py::arg("k") = 0,
        py::arg("lanes") = 8, py::arg("structure_only") = true,
        "A summation tree's text, canonical (structure only by default), parsed or built.");
  m.def("reduction_ops", &ulpgate::ReductionOpsList,
        "The reduction ops: name, definition, operands, variants, shape_rank, default_shape.");
  m.def("reduction_suites", &ulpgate::ReductionSuitesList, "The reductions' input suites.");
  m.def("reduction_inputs", &ulpgate::ReductionInputs, py::arg("op"), py::arg("dtype"), py::arg("shape"),
        py::arg("suite"), py::arg("seed"), py::arg("n"), py::arg("tensors") = "numpy",
        "A suite's instances: one dict of operand arrays each.");
  m.def("check_reduction_callable", &ulpgate::CheckReductionCallable, py::arg("fn"), py::arg("op"),
        py::arg("dtype"), py::arg("shape"), py::arg("suite"), py::arg("seed"), py::arg("n"), py::arg("label"),
        py::arg("tensors") = "numpy", py::arg("threads") = 0,
        "Calls fn on a suite's instances and measures its outputs; returns check's JSON record.");
  m.def("check_reduction", &ulpgate::CheckReductionArrays, py::arg("op"), py::arg("dtype"), py::arg("operands"),
        py::arg("outputs"), py::arg("label"), py::arg("threads") = 0,
        "Measures a reduction's outputs at operands given as (name, array) pairs; returns check's JSON record.");
}
