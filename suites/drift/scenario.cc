#include "suites/drift/scenario.h"

#include <cmath>
#include <fstream>

#include "oracles/float_text.h"
#include "suites/inputs/counter_rng.h"
#include "suites/inputs/inputs.h"

namespace ulpgate {
namespace {

// Streams of the counter-based generator, one per kind of draw.
constexpr uint64_t kDataStream = 0x64617461;    // "data"
constexpr uint64_t kParamStream = 0x706172616d;  // "param"

std::vector<LayerSpec> SeedNetwork() {
  return {{"linear", 4, 4}, {"relu", 0, 0}, {"linear", 4, 2}, {"tanh", 0, 0}};
}

}  // namespace

size_t Scenario::output_size() const {
  size_t out = 0;
  for (const LayerSpec& l : layers) {
    if (l.type == "linear") out = l.out;
  }
  return out;
}

std::vector<std::string> BuiltinScenarioNames() { return {"seed", "saturating"}; }

Scenario BuiltinScenario(const std::string& name) {
  Scenario s;
  s.name = name;
  s.layers = SeedNetwork();
  if (name == "seed") {
    s.description =
        "Linear(4,4) -> ReLU -> Linear(4,2) -> Tanh, MSE, SAM (rho 0.05, eps 1e-12) over SGD "
        "(lr 0.01), 1000 epochs, one batch of 8 inputs uniform in [0,1), targets [1, 0]";
    s.targets = {1.0f, 0.0f};
    return s;
  }
  if (name == "saturating") {
    // Targets outside (-1, 1): the loss keeps pushing tanh towards +-1, so its
    // outputs approach +-1 while the gradient (y - target) stays near 1 in
    // size: where the forms of tanh backward differ most. A larger step and
    // inputs up to 4 get there within the run.
    s.description =
        "the seed network with targets [1.5, -1.5] (outside tanh's range), inputs uniform in "
        "[0, 4), lr 0.05: tanh saturates towards +-1 while its gradient stays large";
    s.targets = {1.5f, -1.5f};
    s.data_high = 4.0f;
    s.lr = 0.05f;
    return s;
  }
  throw InputError("unknown scenario '" + name + "' (built in: seed, saturating)");
}

Scenario ParseScenario(const nlohmann::json& j, const std::string& where) {
  auto fail = [&](const std::string& what) -> void {
    throw InputError(where + ": " + what);
  };
  if (!j.is_object()) fail("a scenario is a JSON object");
  Scenario s;
  auto get_string = [&](const char* key, std::string& out) {
    if (!j.contains(key)) return;
    if (!j[key].is_string()) fail(std::string("'") + key + "' must be a string");
    out = j[key].get<std::string>();
  };
  // A binary32 value: a JSON number (rounded once to binary32) or a string
  // ParseFloat reads (hex floats are exact; reports write them so).
  auto to_float = [&](const nlohmann::json& v, const std::string& what) -> float {
    if (v.is_number()) return static_cast<float>(v.get<double>());
    if (v.is_string()) {
      std::string why;
      const auto x = ParseFloat(v.get<std::string>(), &why);
      if (!x) fail(what + ": " + why);
      return *x;
    }
    fail(what + " must be a number or a hex-float string");
    return 0;
  };
  auto get_float = [&](const char* key, float& out) {
    if (j.contains(key)) out = to_float(j[key], std::string("'") + key + "'");
  };
  auto get_size = [&](const char* key, size_t& out) {
    if (!j.contains(key)) return;
    if (!j[key].is_number_unsigned()) fail(std::string("'") + key + "' must be a non-negative integer");
    out = j[key].get<size_t>();
  };
  get_string("name", s.name);
  get_string("description", s.description);
  get_string("loss", s.loss);
  get_string("optimizer", s.optimizer);
  get_string("dtype", s.dtype);
  get_string("master", s.master);
  get_float("lr", s.lr);
  get_float("rho", s.rho);
  get_float("eps", s.eps);
  get_float("data_low", s.data_low);
  get_float("data_high", s.data_high);
  get_size("epochs", s.epochs);
  get_size("batch", s.batch);
  if (j.contains("seed")) {
    if (!j["seed"].is_number_unsigned()) fail("'seed' must be a non-negative integer");
    s.seed = j["seed"].get<uint64_t>();
  }
  if (!j.contains("layers") || !j["layers"].is_array() || j["layers"].empty()) {
    fail("'layers' must be a non-empty array");
  }
  for (size_t i = 0; i < j["layers"].size(); ++i) {
    const auto& l = j["layers"][i];
    const std::string at = "layers[" + std::to_string(i) + "]";
    if (!l.is_object() || !l.contains("type") || !l["type"].is_string()) {
      fail(at + " must be an object with a string 'type'");
    }
    LayerSpec layer;
    layer.type = l["type"].get<std::string>();
    if (layer.type == "linear") {
      if (!l.contains("in") || !l["in"].is_number_unsigned() || !l.contains("out") ||
          !l["out"].is_number_unsigned()) {
        fail(at + ": a linear layer needs integer 'in' and 'out'");
      }
      layer.in = l["in"].get<size_t>();
      layer.out = l["out"].get<size_t>();
      if (layer.in == 0 || layer.out == 0) fail(at + ": sizes must be positive");
    } else if (layer.type != "relu" && layer.type != "tanh") {
      fail(at + ": unknown layer type '" + layer.type + "' (linear, relu, tanh)");
    }
    s.layers.push_back(layer);
  }
  if (j.contains("targets")) {
    if (!j["targets"].is_array()) fail("'targets' must be an array");
    for (const auto& t : j["targets"]) s.targets.push_back(to_float(t, "'targets'"));
  }
  if (j.contains("x")) {
    if (!j["x"].is_array()) fail("'x' must be an array");
    for (const auto& v : j["x"]) s.x.push_back(to_float(v, "'x'"));
  }
  if (j.contains("initial_parameters")) {
    const auto& p = j["initial_parameters"];
    if (!p.is_object()) fail("'initial_parameters' must be an object of arrays (W0, b0, ...)");
    size_t linear = 0;
    for (const LayerSpec& l : s.layers) linear += l.type == "linear";
    for (size_t k = 0; k < 2 * linear; ++k) {
      const std::string name = (k % 2 == 0 ? "W" : "b") + std::to_string(k / 2);
      if (!p.contains(name) || !p[name].is_array()) fail("'initial_parameters' lacks array '" + name + "'");
      std::vector<float> tensor;
      for (const auto& v : p[name]) tensor.push_back(to_float(v, "'initial_parameters." + name + "'"));
      s.initial.push_back(std::move(tensor));
    }
  }
  // Consistency.
  if (s.layers.front().type != "linear") fail("the first layer must be linear");
  size_t width = s.layers.front().in;
  for (const LayerSpec& l : s.layers) {
    if (l.type == "linear") {
      if (l.in != width) fail("layer sizes do not chain (" + std::to_string(width) + " -> " + std::to_string(l.in) + ")");
      width = l.out;
    }
  }
  if (s.targets.size() != s.output_size()) {
    fail("'targets' must have one value per network output (" + std::to_string(s.output_size()) + ")");
  }
  try {
    s.precision();
  } catch (const InputError& e) {
    fail(e.what());
  }
  if (s.loss != "mse") fail("unknown loss '" + s.loss + "' (mse)");
  if (s.optimizer != "sam" && s.optimizer != "sgd") fail("unknown optimizer '" + s.optimizer + "' (sam, sgd)");
  if (s.epochs == 0 || s.batch == 0) fail("'epochs' and 'batch' must be positive");
  if (!(s.data_low < s.data_high)) fail("'data_low' must be below 'data_high'");
  if (!s.x.empty() && s.x.size() != s.batch * s.input_size()) {
    fail("'x' must hold batch * inputs = " + std::to_string(s.batch * s.input_size()) + " values");
  }
  if (!s.initial.empty()) {
    size_t k = 0;
    for (const LayerSpec& l : s.layers) {
      if (l.type != "linear") continue;
      if (s.initial[k].size() != l.out * l.in || s.initial[k + 1].size() != l.out) {
        fail("'initial_parameters' W" + std::to_string(k / 2) + "/b" + std::to_string(k / 2) +
             " must hold out*in and out values");
      }
      k += 2;
    }
  }
  return s;
}

Scenario ReadScenarioFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot open for reading");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(path + ": malformed JSON at byte " + std::to_string(e.byte));
  }
  return ParseScenario(j, path);
}

nlohmann::ordered_json ScenarioJson(const Scenario& s) {
  nlohmann::ordered_json j;
  j["name"] = s.name;
  j["description"] = s.description;
  for (const LayerSpec& l : s.layers) {
    nlohmann::ordered_json layer{{"type", l.type}};
    if (l.type == "linear") {
      layer["in"] = l.in;
      layer["out"] = l.out;
    }
    j["layers"].push_back(layer);
  }
  j["loss"] = s.loss;
  j["optimizer"] = s.optimizer;
  j["lr"] = HexFloat(s.lr);
  j["rho"] = HexFloat(s.rho);
  j["eps"] = HexFloat(s.eps);
  j["epochs"] = s.epochs;
  j["batch"] = s.batch;
  j["data_low"] = HexFloat(s.data_low);
  j["data_high"] = HexFloat(s.data_high);
  for (float t : s.targets) j["targets"].push_back(HexFloat(t));
  j["seed"] = s.seed;
  j["dtype"] = s.dtype;
  if (!s.master.empty()) j["master"] = s.master;
  if (!s.x.empty()) {
    for (float v : s.x) j["x"].push_back(HexFloat(v));
  }
  for (size_t k = 0; k < s.initial.size(); ++k) {
    const std::string name = (k % 2 == 0 ? "W" : "b") + std::to_string(k / 2);
    for (float v : s.initial[k]) j["initial_parameters"][name].push_back(HexFloat(v));
  }
  return j;
}

Batch MakeBatch(const Scenario& s) {
  Batch batch;
  const size_t in = s.input_size(), out = s.output_size();
  batch.x.resize(s.batch * in);
  for (size_t i = 0; i < batch.x.size() && s.x.empty(); ++i) {
    CounterRng rng(s.seed, kDataStream, i);
    // A 24-bit grid in [0, 1), exact in binary32, then scaled once.
    const double u = static_cast<double>(rng.Next32() >> 8) * 0x1p-24;
    batch.x[i] = static_cast<float>(s.data_low + u * (static_cast<double>(s.data_high) - s.data_low));
  }
  if (!s.x.empty()) batch.x = s.x;
  for (size_t b = 0; b < s.batch; ++b) {
    for (size_t k = 0; k < out; ++k) batch.target.push_back(s.targets[k]);
  }
  return batch;
}

Parameters InitialParameters(const Scenario& s) {
  Parameters p;
  size_t layer_index = 0;
  uint64_t counter = 0;
  for (const LayerSpec& l : s.layers) {
    if (l.type != "linear") continue;
    // PyTorch's default: uniform in +-1/sqrt(fan_in), the bound in binary32.
    const double bound = static_cast<float>(1.0 / std::sqrt(static_cast<double>(l.in)));
    for (size_t t = 0; t < 2; ++t) {
      const size_t size = t == 0 ? l.out * l.in : l.out;
      std::vector<float> tensor(size);
      for (float& v : tensor) {
        CounterRng rng(s.seed, kParamStream, counter++);
        const double u = static_cast<double>(rng.Next32() >> 8) * 0x1p-24;  // [0, 1)
        v = static_cast<float>((2.0 * u - 1.0) * bound);
      }
      if (!s.initial.empty()) tensor = s.initial[p.tensors.size()];
      p.tensors.push_back(std::move(tensor));
      p.names.push_back((t == 0 ? "W" : "b") + std::to_string(layer_index));
    }
    ++layer_index;
  }
  return p;
}

}  // namespace ulpgate
