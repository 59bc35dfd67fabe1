// A line for whoever waits on a command while a kernel's fault is being
// pinned on its input: the IUT client bisects a crashing or hanging call, a
// call at a time, and a hang costs a timeout per step, so the command says
// what it is doing ("bisecting a hang of sigmoid_bwd hang on flaky: ...")
// instead of a progress line that stands still.
#ifndef ULPGATE_SUITES_ENGINE_FAULT_NOTICE_H_
#define ULPGATE_SUITES_ENGINE_FAULT_NOTICE_H_

#include <functional>
#include <string>

namespace ulpgate {

// Where the lines go (tools/progress.h's ProgressLine sets it while it
// shows); empty: nowhere. Called from any thread, one line at a time.
void SetKernelFaultNotice(std::function<void(const std::string&)> notice);
void KernelFaultNotice(const std::string& line);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_ENGINE_FAULT_NOTICE_H_
