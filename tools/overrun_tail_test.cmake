# ctest driver: ulpgate_mutant with ULPGATE_MUTANT=overrun_tail, whose tanh_bwd
# mulsub gives right outputs but writes one element past its output on every
# call with a tail (n mod lanes > 0: the targets of more than one lane). Its
# cases are faults (OUT OF BOUNDS), named with the kernel and the call, and
# every other case is measured, the exit status 3:
# - run, whose calls have every length;
# - a sweep, although its tiles are whole and aligned: each block's call is
#   cut into a misaligned start, a middle and a short tail through guarded
#   buffers (sweep_run.cc), so the tail's overrun shows there too.
# -DULPGATE=<ulpgate_mutant>
include(${CMAKE_CURRENT_LIST_DIR}/cli_expect.cmake)
set(ENV{ULPGATE_MUTANT} overrun_tail)

# SCALAR has one lane, so no tail: measured, as every other variant is.
ulpgate_expect(3
  "mulsub +SCALAR +[0-9].*mulsub +[A-Z0-9_]+ +OUT OF BOUNDS.*mulsub_fma +SCALAR +[0-9].*OUT OF BOUNDS: tanh_bwd mulsub \\(f32\\) on [A-Z0-9_]+: the kernel wrote.*reproduce: "
  run --op tanh_bwd --n 500)
ulpgate_expect(3
  "mulsub +SCALAR +0\\.5 .*mulsub +[A-Z0-9_]+ +OUT OF BOUNDS.*OUT OF BOUNDS: tanh_bwd mulsub \\(f32\\) on [A-Z0-9_]+: the kernel wrote.*reproduce: "
  sweep --op tanh_bwd --variant mulsub --dtype f32 --t 0.5 --range 0x3f000000:0x3f040000)
