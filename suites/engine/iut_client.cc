#include "suites/engine/iut_client.h"
#include "suites/engine/fault_notice.h"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>

#include <fmt/format.h>
#include <stdexcept>

extern char** environ;

namespace ulpgate {

const char* KernelFaultName(KernelFaultKind kind) {
  switch (kind) {
    case KernelFaultKind::kCrashed: return "CRASHED";
    case KernelFaultKind::kTimeout: return "TIMEOUT";
    case KernelFaultKind::kOutOfBounds: return "OUT OF BOUNDS";
    case KernelFaultKind::kRefused: return "REFUSED";
  }
  return "?";
}

const char* KernelFaultKey(KernelFaultKind kind) {
  switch (kind) {
    case KernelFaultKind::kCrashed: return "crashed";
    case KernelFaultKind::kTimeout: return "timeout";
    case KernelFaultKind::kOutOfBounds: return "out_of_bounds";
    case KernelFaultKind::kRefused: return "refused";
  }
  return "?";
}

std::optional<KernelFaultKind> KernelFaultFromKey(std::string_view key) {
  for (KernelFaultKind kind : {KernelFaultKind::kCrashed, KernelFaultKind::kTimeout,
                               KernelFaultKind::kOutOfBounds, KernelFaultKind::kRefused}) {
    if (key == KernelFaultKey(kind)) return kind;
  }
  return std::nullopt;
}

namespace {

std::mutex& NoticeMutex() {
  static std::mutex mutex;
  return mutex;
}

std::function<void(const std::string&)>& Notice() {
  static std::function<void(const std::string&)> notice;
  return notice;
}

}  // namespace

void SetKernelFaultNotice(std::function<void(const std::string&)> notice) {
  std::lock_guard<std::mutex> lock(NoticeMutex());
  Notice() = std::move(notice);
}

void KernelFaultNotice(const std::string& line) {
  std::lock_guard<std::mutex> lock(NoticeMutex());
  if (Notice()) Notice()(line);
}

namespace {

// Without an explicit timeout a call may take 100 times the kernel's median
// time per input of its calls so far, scaled to the call's inputs, and at
// least a second: a hang then costs seconds, not the fixed default per
// bisection step, while a slow kernel (an emulator, a GPU's first call) is
// never cut short by another's pace. Until a kernel has answered
// kMinCallSamples calls, the fixed default holds.
constexpr double kCallTimeFactor = 100.0;
constexpr double kMinAdaptiveSeconds = 1.0;
constexpr size_t kMinCallSamples = 3;
constexpr size_t kMaxCallSamples = 101;

class CallTimes {
 public:
  void Add(const std::string& kernel, double seconds, uint64_t n) {
    if (n == 0) return;
    std::lock_guard<std::mutex> lock(mutex_);
    Samples& s = samples_[kernel];
    const double per_input = seconds / static_cast<double>(n);
    if (s.values.size() < kMaxCallSamples) {
      s.values.push_back(per_input);
    } else {
      s.values[s.next] = per_input;
    }
    s.next = (s.next + 1) % kMaxCallSamples;
  }
  // The median seconds per input; negative until kMinCallSamples calls.
  double Median(const std::string& kernel) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = samples_.find(kernel);
    if (it == samples_.end() || it->second.values.size() < kMinCallSamples) return -1;
    std::vector<double> v = it->second.values;
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    return v[v.size() / 2];
  }

 private:
  struct Samples {
    std::vector<double> values;
    size_t next = 0;
  };
  std::mutex mutex_;
  std::map<std::string, Samples> samples_;
};

CallTimes& KernelCallTimes() {
  static CallTimes times;
  return times;
}

// One kernel of one IUT command line, for its call times.
std::string KernelKey(const std::vector<std::string>& argv, const IutCall& call) {
  std::string key;
  for (const std::string& a : argv) key += a + '\x1f';
  return key + call.op + '\x1f' + call.dtype + '\x1f' + call.target + '\x1f' + call.variant;
}

std::string Seconds(double s) { return fmt::format("{:.3g} s", s); }

double Now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

std::string StatusText(int status) {
  if (WIFSIGNALED(status)) {
    const char* abbrev = sigabbrev_np(WTERMSIG(status));
    return abbrev != nullptr ? std::string("SIG") + abbrev
                             : "signal " + std::to_string(WTERMSIG(status));
  }
  if (WIFEXITED(status)) return "exit status " + std::to_string(WEXITSTATUS(status));
  return "status " + std::to_string(status);
}

std::string CommandText(const std::vector<std::string>& argv) {
  std::string text;
  for (const std::string& a : argv) text += (text.empty() ? "" : " ") + a;
  return text;
}

// Waits up to `seconds` for the process to end; kills it after that.
int Reap(pid_t pid, double seconds) {
  int status = 0;
  const double until = Now() + seconds;
  while (true) {
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) return status;
    if (r < 0) return 0;
    if (Now() > until) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return status;
    }
    usleep(1000);
  }
}

}  // namespace

std::string BundledIutPath() {
  char buffer[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buffer, sizeof(buffer) - 1);
  if (n <= 0) return "ulpgate-iut";
  std::string path(buffer, static_cast<size_t>(n));
  return path.substr(0, path.rfind('/') + 1) + "ulpgate-iut";
}

IutProcess::IutProcess(std::vector<std::string> argv, double timeout_seconds)
    : argv_(std::move(argv)), timeout_seconds_(timeout_seconds) {
  if (argv_.empty()) throw std::invalid_argument("an empty IUT command line");
  // A write to an IUT that died must be an error to handle, not this
  // process's end.
  signal(SIGPIPE, SIG_IGN);
}

IutProcess::~IutProcess() {
  Stop(/*kill=*/false);
  if (shm_ != nullptr) munmap(shm_, kIutShmBytes);
  if (shm_fd_ >= 0) close(shm_fd_);
}

void IutProcess::Start() {
  int to[2], from[2];
  if (pipe2(to, O_CLOEXEC) != 0) throw std::runtime_error("pipe: " + std::string(strerror(errno)));
  if (pipe2(from, O_CLOEXEC) != 0) {
    close(to[0]);
    close(to[1]);
    throw std::runtime_error("pipe: " + std::string(strerror(errno)));
  }
  // The data region: a memory file the IUT may map (kIutShmLine), sparse
  // until touched. Where it cannot be made, the pipes carry the data.
  if (shm_fd_ < 0) {
    const int fd = memfd_create("ulpgate-iut-data", MFD_CLOEXEC);
    if (fd >= 0 && ftruncate(fd, static_cast<off_t>(kIutShmBytes)) == 0) {
      void* p = mmap(nullptr, kIutShmBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      if (p != MAP_FAILED) {
        shm_fd_ = fd;
        shm_ = static_cast<char*>(p);
      }
    }
    if (shm_fd_ < 0 && fd >= 0) close(fd);
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, to[0], 0);
  posix_spawn_file_actions_adddup2(&actions, from[1], 1);
  std::vector<std::string> variables;
  if (shm_fd_ >= 0) {
    posix_spawn_file_actions_adddup2(&actions, shm_fd_, kIutShmFd);
    variables.push_back(std::string(kIutShmFdVariable) + "=" + std::to_string(kIutShmFd));
    variables.push_back(std::string(kIutShmBytesVariable) + "=" + std::to_string(kIutShmBytes));
  }
  std::vector<char*> env;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "ULPGATE_IUT_SHM_", 16) != 0) env.push_back(*e);
  }
  for (std::string& v : variables) env.push_back(v.data());
  env.push_back(nullptr);
  std::vector<char*> args;
  for (std::string& a : argv_) args.push_back(a.data());
  args.push_back(nullptr);
  const int error = posix_spawnp(&pid_, args[0], &actions, nullptr, args.data(), env.data());
  posix_spawn_file_actions_destroy(&actions);
  close(to[0]);
  close(from[1]);
  if (error != 0) {
    close(to[1]);
    close(from[0]);
    pid_ = -1;
    throw std::runtime_error("cannot start the IUT '" + CommandText(argv_) + "': " + strerror(error));
  }
  to_iut_ = to[1];
  from_iut_ = from[0];
  fcntl(to_iut_, F_SETFL, fcntl(to_iut_, F_GETFL) | O_NONBLOCK);
  fcntl(from_iut_, F_SETFL, fcntl(from_iut_, F_GETFL) | O_NONBLOCK);
  // An emulator may take a while to start: the greeting gets more time than a call.
  deadline_ = Now() + std::max(timeout_seconds_, 60.0);
  std::string line;
  const bool greeted = ReadLine(&line);
  version_ = IutGreetingVersion(line);
  if (!greeted || version_ == 0) {
    const bool timed_out = timed_out_;
    Stop(/*kill=*/true);
    throw std::runtime_error("the IUT '" + CommandText(argv_) + "' " +
                             (timed_out ? std::string("did not greet in time")
                                        : "did not greet as " + std::string(kIutGreeting) + ", " +
                                              std::string(kIutGreetingV2) + " or " +
                                              std::string(kIutGreetingV1) + (line.empty() ? "" : " (it said '" + line + "')")));
  }
  offers_.clear();
  shm_in_use_ = false;
  packed4_ = false;
  while (ReadLine(&line) && line != "ready") {
    if (line == kIutShmLine) {
      shm_in_use_ = shm_ != nullptr;
      continue;
    }
    if (line == kIutPacked4Line && version_ >= 2) {
      packed4_ = true;
      continue;
    }
    if (line.rfind("kernel", 0) != 0) continue;  // lines the host does not know
    const std::optional<IutOffer> offer = ParseIutOffer(line);
    if (!offer) {
      Stop(/*kill=*/true);
      throw std::runtime_error("the IUT '" + CommandText(argv_) + "' offered a kernel as '" + line +
                               "' (expected: kernel TARGET OP DTYPE VARIANT [MODEL])");
    }
    if (version_ < 2 && IutCastSource(offer->op) != nullptr) {
      Stop(/*kill=*/true);
      throw std::runtime_error("the IUT '" + CommandText(argv_) + "' offered " + offer->op +
                               " after greeting as " + std::string(kIutGreetingV1) +
                               " (casts need " + std::string(kIutGreetingV2) + " or later)");
    }
    if (version_ < 3 && IsIutReductionOp(offer->op)) {
      Stop(/*kill=*/true);
      throw std::runtime_error("the IUT '" + CommandText(argv_) + "' offered " + offer->op +
                               " after greeting as ulpgate-iut " + std::to_string(version_) +
                               " (reductions need " + std::string(kIutGreeting) + ")");
    }
    offers_.push_back(*offer);
  }
  if (line != "ready") {
    Stop(/*kill=*/true);
    throw std::runtime_error("the IUT '" + CommandText(argv_) + "' did not say ready");
  }
}

void IutProcess::Stop(bool kill_it) {
  if (pid_ < 0) return;
  if (!kill_it && to_iut_ >= 0) {
    static constexpr char kQuit[] = "quit\n";
    [[maybe_unused]] const ssize_t w = write(to_iut_, kQuit, sizeof(kQuit) - 1);
  }
  if (kill_it) kill(pid_, SIGKILL);
  if (to_iut_ >= 0) close(to_iut_);
  if (from_iut_ >= 0) close(from_iut_);
  to_iut_ = from_iut_ = -1;
  Reap(pid_, kill_it ? 5.0 : 2.0);
  pid_ = -1;
}

KernelFault IutProcess::Died() {
  // Its output ended: it is dying or dead (or closed stdout and lives on,
  // which the protocol does not allow: it is ended).
  if (to_iut_ >= 0) close(to_iut_);
  if (from_iut_ >= 0) close(from_iut_);
  to_iut_ = from_iut_ = -1;
  const int status = Reap(pid_, 2.0);
  pid_ = -1;
  KernelFault f;
  f.kind = KernelFaultKind::kCrashed;
  f.detail = StatusText(status);
  return f;
}

bool IutProcess::AwaitReady(int fd, short events) {
  const double left = deadline_ - Now();
  if (left <= 0) {
    timed_out_ = true;
    return false;
  }
  pollfd p{fd, events, 0};
  poll(&p, 1, static_cast<int>(std::min(left, 1.0) * 1000) + 1);
  return true;
}

bool IutProcess::WriteAll(const void* data, size_t bytes) {
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t w = write(to_iut_, p, bytes);
    if (w > 0) {
      p += w;
      bytes -= static_cast<size_t>(w);
      continue;
    }
    if (w < 0 && errno != EAGAIN && errno != EINTR) return false;  // EPIPE: it died
    if (!AwaitReady(to_iut_, POLLOUT)) return false;
  }
  return true;
}

bool IutProcess::ReadAll(void* data, size_t bytes) {
  char* p = static_cast<char*>(data);
  timed_out_ = false;
  while (bytes > 0) {
    const ssize_t r = read(from_iut_, p, bytes);
    if (r > 0) {
      p += r;
      bytes -= static_cast<size_t>(r);
      continue;
    }
    if (r == 0) return false;  // EOF
    if (errno != EAGAIN && errno != EINTR) return false;
    if (!AwaitReady(from_iut_, POLLIN)) return false;
  }
  return true;
}

bool IutProcess::ReadLine(std::string* line) {
  line->clear();
  for (char c; ReadAll(&c, 1);) {
    if (c == '\n') return true;
    line->push_back(c);
    if (line->size() > 4096) return false;  // not the protocol
  }
  return false;
}

IutProcess::Outcome IutProcess::TryCall(const IutCall& call, const void* const* operands,
                                        void* out, uint64_t offset, uint64_t n) {
  // out receives elements offset .. offset + n - 1 from its start.
  Outcome o;
  if (pid_ < 0) Start();
  IutCall c = call;
  c.n = n;
  const std::optional<IutLayout> found = IutCallLayout(call.op, call.dtype, packed4_);
  if (!found) {
    o.fault.kind = KernelFaultKind::kRefused;
    o.fault.detail = "the protocol carries no " + call.op + " in " + call.dtype;
    return o;
  }
  const IutLayout layout = *found;
  const size_t in_bytes = layout.operand_bytes;
  const std::string kernel = KernelKey(argv_, call);
  double timeout = timeout_seconds_;
  if (timeout <= 0) {
    const double median = KernelCallTimes().Median(kernel);
    timeout = median < 0 ? kDefaultKernelTimeoutSeconds
                         : std::max(kMinAdaptiveSeconds, kCallTimeFactor * median * static_cast<double>(n));
  }
  const double started = Now();
  deadline_ = started + timeout;
  timed_out_ = false;
  const std::string header = FormatIutCall(c) + "\n";
  const bool shm = shm_in_use_;
  for (size_t k = 0; shm && k < call.arity; ++k) {
    std::memcpy(shm_ + IutShmOffset(k, n, in_bytes),
                static_cast<const char*>(operands[k]) + offset * in_bytes, n * in_bytes);
  }
  // The outputs follow the operands; those an IUT fails to write read as NaN
  // (all ones: a NaN code of every format that has one), never as the last call's.
  const uint64_t out_at = IutShmOffset(call.arity, n, in_bytes);
  const uint64_t out_bytes = layout.OutputBytes(n);
  if (shm) std::memset(shm_ + out_at, 0xff, out_bytes);
  bool sent = WriteAll(header.data(), header.size());
  for (size_t k = 0; sent && !shm && k < call.arity; ++k) {
    sent = WriteAll(static_cast<const char*>(operands[k]) + offset * in_bytes, n * in_bytes);
  }
  std::string line;
  if (!sent || !ReadLine(&line)) {
    if (timed_out_) {
      Stop(/*kill=*/true);
      o.fault.kind = KernelFaultKind::kTimeout;
      o.fault.detail = "no answer in " + Seconds(timeout);
    } else {
      o.fault = Died();
    }
    return o;
  }
  if (line == "ok " + std::to_string(n)) {
    KernelCallTimes().Add(kernel, Now() - started, n);
    // Packed 4-bit codes land in a scratch buffer and are spread one a byte.
    std::vector<uint8_t> packed(layout.packed4 ? out_bytes : 0);
    void* into = layout.packed4 ? static_cast<void*>(packed.data()) : out;
    const auto unpack = [&] {
      uint8_t* codes = static_cast<uint8_t*>(out);
      for (uint64_t i = 0; layout.packed4 && i < n; ++i) {
        codes[i] = static_cast<uint8_t>((packed[i / 2] >> (4 * (i % 2))) & 0xf);
      }
    };
    if (shm) {
      std::memcpy(into, shm_ + out_at, out_bytes);
      unpack();
      o.ok = true;
      return o;
    }
    if (!ReadAll(into, out_bytes)) {
      if (timed_out_) {
        Stop(/*kill=*/true);
        o.fault.kind = KernelFaultKind::kTimeout;
        o.fault.detail = "its outputs did not come in time";
      } else {
        o.fault = Died();
      }
      return o;
    }
    unpack();
    o.ok = true;
    return o;
  }
  if (line.rfind("error ", 0) == 0) {
    const std::string message = line.substr(6);
    o.fault.kind = message.find("outside its output") != std::string::npos
                       ? KernelFaultKind::kOutOfBounds
                       : KernelFaultKind::kRefused;
    o.fault.detail = message;
    return o;  // it answered, so it is still in step
  }
  Stop(/*kill=*/true);
  o.fault.kind = KernelFaultKind::kRefused;
  o.fault.detail = "an answer outside the protocol: '" + line.substr(0, 80) + "'";
  return o;
}

KernelFault IutProcess::Locate(const IutCall& call, const void* const* operands, uint64_t offset,
                               uint64_t n, const KernelFault& first) {
  KernelFault fault = first;
  fault.first = static_cast<int64_t>(offset);
  fault.count = static_cast<int64_t>(n);
  fault.index = n == 1 ? static_cast<int64_t>(offset) : -1;
  // Only a crash or a hang can be pinned on one input; a refusal is the call's.
  if (first.kind != KernelFaultKind::kCrashed && first.kind != KernelFaultKind::kTimeout) {
    return fault;
  }
  const std::optional<IutLayout> layout = IutCallLayout(call.op, call.dtype);
  std::vector<char> scratch(n * (layout ? layout->output_bytes : 4));
  void* out = scratch.data();
  uint64_t lo = offset, length = n;
  KernelFault last = first;
  const std::string what = fmt::format("bisecting a {} of {} {} on {} ({})",
                                       first.kind == KernelFaultKind::kCrashed ? "crash" : "hang",
                                       call.op, call.variant, call.target, first.detail);
  while (length > 1) {
    KernelFaultNotice(fmt::format("{}: a call of {} inputs", what, length));
    const uint64_t half = length / 2;
    Outcome o = TryCall(call, operands, out, lo, half);
    if (!o.ok && o.fault.kind == first.kind) {
      length = half;
      last = o.fault;
      continue;
    }
    o = TryCall(call, operands, out, lo + half, length - half);
    if (!o.ok && o.fault.kind == first.kind) {
      lo += half;
      length -= half;
      last = o.fault;
      continue;
    }
    return fault;  // neither half alone: the call as a whole
  }
  fault = last;
  fault.first = static_cast<int64_t>(offset);
  fault.count = static_cast<int64_t>(n);
  fault.index = static_cast<int64_t>(lo);
  return fault;
}

void IutProcess::Reduce(const IutReduceCall& call, const void* const* operands, void* out) {
  std::lock_guard<std::mutex> lock(mutex_);
  // A reduction's outputs depend on the whole call: a fault is the call's,
  // never pinned on one element, so there is nothing to bisect.
  KernelFault fault;
  fault.index = -1;
  fault.first = 0;
  fault.count = static_cast<int64_t>(call.output_count);
  if (pid_ < 0) Start();
  const size_t bytes = IutElementBytes(call.dtype);
  if (version_ < 3) {
    fault.kind = KernelFaultKind::kRefused;
    fault.detail = "the IUT greets as ulpgate-iut " + std::to_string(version_) + ": no reductions";
    throw KernelFaultError(fault);
  }
  if (bytes == 0 || call.TotalElements() > kIutShmBytes / (bytes == 0 ? 1 : bytes)) {
    fault.kind = KernelFaultKind::kRefused;
    fault.detail = "the protocol carries no " + call.op + " call in " + call.dtype + " of " +
                   std::to_string(call.TotalElements()) + " elements";
    throw KernelFaultError(fault);
  }
  const std::string kernel = KernelKey(argv_, IutCall{call.op, call.dtype, call.target, call.variant, 0, 0});
  const uint64_t n = std::max<uint64_t>(call.TotalElements(), 1);
  double timeout = timeout_seconds_;
  if (timeout <= 0) {
    const double median = KernelCallTimes().Median(kernel);
    timeout = median < 0 ? kDefaultKernelTimeoutSeconds
                         : std::max(kMinAdaptiveSeconds, kCallTimeFactor * median * static_cast<double>(n));
  }
  const double started = Now();
  deadline_ = started + timeout;
  timed_out_ = false;
  const bool shm = shm_in_use_;
  const size_t arity = call.operand_counts.size();
  for (size_t k = 0; shm && k < arity; ++k) {
    std::memcpy(shm_ + call.ShmOffset(k, bytes), operands[k], call.operand_counts[k] * bytes);
  }
  const uint64_t out_at = call.ShmOffset(arity, bytes);
  const uint64_t out_bytes = call.output_count * bytes;
  if (shm) std::memset(shm_ + out_at, 0xff, out_bytes);
  const std::string header = FormatIutReduceCall(call) + "\n";
  bool sent = WriteAll(header.data(), header.size());
  for (size_t k = 0; sent && !shm && k < arity; ++k) {
    sent = WriteAll(operands[k], call.operand_counts[k] * bytes);
  }
  std::string line;
  const auto lost = [&](const char* what) {
    if (timed_out_) {
      Stop(/*kill=*/true);
      fault.kind = KernelFaultKind::kTimeout;
      fault.detail = std::string(what) + " in " + Seconds(timeout);
    } else {
      const KernelFault died = Died();
      fault.kind = died.kind;
      fault.detail = died.detail;
    }
    throw KernelFaultError(fault);
  };
  if (!sent || !ReadLine(&line)) lost("no answer");
  if (line == "ok " + std::to_string(call.output_count)) {
    if (shm) {
      std::memcpy(out, shm_ + out_at, out_bytes);
    } else if (!ReadAll(out, out_bytes)) {
      lost("its outputs did not come");
    }
    KernelCallTimes().Add(kernel, Now() - started, n);
    return;
  }
  if (line.rfind("error ", 0) == 0) {
    const std::string message = line.substr(6);
    fault.kind = message.find("outside its output") != std::string::npos ? KernelFaultKind::kOutOfBounds
                                                                         : KernelFaultKind::kRefused;
    fault.detail = message;
    throw KernelFaultError(fault);
  }
  Stop(/*kill=*/true);
  fault.kind = KernelFaultKind::kRefused;
  fault.detail = "an answer outside the protocol: '" + line.substr(0, 80) + "'";
  throw KernelFaultError(fault);
}

std::vector<IutOffer> IutProcess::Offers() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (pid_ < 0) Start();
  return offers_;
}

void IutProcess::Call(const IutCall& call, const void* const* operands, void* out) {
  std::lock_guard<std::mutex> lock(mutex_);
  // The host's outputs are unpacked whatever the IUT sends: one element per
  // output_bytes.
  const std::optional<IutLayout> layout = IutCallLayout(call.op, call.dtype);
  const size_t out_bytes = layout ? layout->output_bytes : 0;
  for (uint64_t offset = 0; offset < call.n; offset += kIutMaxCall) {
    const uint64_t n = std::min<uint64_t>(kIutMaxCall, call.n - offset);
    const Outcome o = TryCall(call, operands, static_cast<char*>(out) + offset * out_bytes, offset, n);
    if (!o.ok) throw KernelFaultError(Locate(call, operands, offset, n, o.fault));
  }
}

}  // namespace ulpgate
