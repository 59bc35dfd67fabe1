#include "suites/reveal/iut_door.h"

#include <mutex>
#include <vector>

#include <fmt/format.h>

#include "kernels/iut/iut_protocol.h"
#include "oracles/format.h"
#include "suites/engine/iut_client.h"
#include "suites/reveal/plugin_door.h"

namespace ulpgate {

namespace {

// The IUT's process, restarted with other thread variables by SetThreads.
struct IutDoorState {
  std::string command;
  double timeout_seconds = 10.0;
  std::mutex mutex;
  std::shared_ptr<IutProcess> process;

  std::shared_ptr<IutProcess> Start(const std::string& prefix) {
    return std::make_shared<IutProcess>(std::vector<std::string>{"/bin/sh", "-c", prefix + "exec " + command},
                                        timeout_seconds);
  }
};

}  // namespace

std::unique_ptr<DotDoor> MakeIutDotDoor(const std::string& command, const std::string& variant,
                                        double timeout_seconds) {
  auto state = std::make_shared<IutDoorState>();
  state->command = command;
  state->timeout_seconds = timeout_seconds;
  state->process = state->Start("");
  std::vector<IutOffer> offers;
  try {
    offers = state->process->Offers();
  } catch (const std::exception& e) {
    throw DotDoorError(fmt::format("--iut '{}': {}", command, e.what()));
  }
  const size_t at = variant.find('@');
  const std::string name = variant.substr(0, at);
  const std::string target = at == std::string::npos ? "" : variant.substr(at + 1);
  std::vector<const IutOffer*> found;
  std::string known;
  for (const IutOffer& o : offers) {
    if (o.op != "linear_fwd") continue;
    known += (known.empty() ? "" : ", ") + o.variant + "@" + o.target + " (" + o.dtype + ")";
    if (o.variant != name || (!target.empty() && o.target != target)) continue;
    if (FindFormat(o.dtype) == nullptr || IutElementBytes(o.dtype) == 0) continue;
    // Of one target's kernels of that name, its f32 one.
    bool replaced = false;
    for (const IutOffer*& f : found) {
      if (f->target == o.target) {
        if (o.dtype == "f32") f = &o;
        replaced = true;
      }
    }
    if (!replaced) found.push_back(&o);
  }
  if (found.size() != 1) {
    throw DotDoorError(fmt::format("--iut '{}': {} linear_fwd kernel '{}' ({}: {})", command,
                                   found.empty() ? "no" : "more than one", variant,
                                   found.empty() ? "it offers" : "name one as NAME@TARGET",
                                   known.empty() ? "none" : known));
  }
  const IutOffer offer = *found.front();
  IutReduceCall call;
  call.op = "linear_fwd";
  call.dtype = offer.dtype;
  call.target = offer.target;
  call.variant = offer.variant;
  auto reduce = [state, call](const void* const* in, void* out, const size_t* e, size_t) {
    IutReduceCall c = call;
    c.extents = {e[0], e[1], e[2]};
    c.operand_counts = {e[0] * e[1], e[2] * e[1], e[2]};
    c.output_count = e[0] * e[2];
    std::shared_ptr<IutProcess> process;
    {
      std::lock_guard<std::mutex> lock(state->mutex);
      process = state->process;
    }
    try {
      process->Reduce(c, in, out);
    } catch (const std::runtime_error& err) {
      if (dynamic_cast<const KernelFaultError*>(&err) != nullptr) throw;
      throw DotDoorError(err.what());  // it did not start again
    }
  };
  auto set_threads = [state](unsigned threads) {
    std::string prefix;
    for (const char* v : kIutThreadVariables) prefix += fmt::format("{}={} ", v, threads);
    std::lock_guard<std::mutex> lock(state->mutex);
    state->process = state->Start(prefix);
    return true;
  };
  return MakeLinearFwdDotDoor(fmt::format("iut:{}:{}@{}", command, offer.variant, offer.target),
                              *FindFormat(offer.dtype), reduce, set_threads);
}

}  // namespace ulpgate
