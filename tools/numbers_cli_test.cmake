# ctest driver: numbers as they are and special mismatches explained, as a
# user meets them. `check` of hand-made outputs with one special mismatch of
# each cause (text and JSON: count and first input per cause, a replay line
# each); a bf16 sweep whose kernels are a hair over half an ULP off, whose
# maximum must not read "0.5", and whose special mismatches are t*t
# overflowing binary32 (intermediate overflow).
# Variables: ULPGATE, PYTHON, WORK.
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

include("${CMAKE_CURRENT_LIST_DIR}/cli_expect.cmake")

# tanh_bwd = grad (1 - t^2) at each input, and the output given there:
#   #0 grad = 0, t = 2^64:          x = 0            y = NaN   intermediate overflow
#   #1 grad = 2^-10, t = 2^64:      x = -2^118 (+..) y = -inf  intermediate overflow
#   #2 grad = 2^100, t = 2^64:      x ~ -2^228       y = NaN   NaN where finite (beyond range)
#   #3 the same input:                               y = +inf  infinity where finite
#   #4 grad = inf, t = 0.5:         x = +inf         y = 1     finite where infinite
#   #5 the same input:                               y = NaN   NaN or the other infinity
#   #6 grad = inf, t = 1:           x = inf * 0      y = 0     a number where undefined
#   #7 grad = 1, t = 0.5:           x = 0.75         y = 0.75  correct
#   #8 grad = 1, t = 1:             x = +0           y = -0    signed zero (no special mismatch)
file(WRITE "${WORK}/inputs.txt"
  "0 0x1p+64\n0x1p-10 0x1p+64\n0x1p+100 0x1p+64\n0x1p+100 0x1p+64\ninf 0x1p-1\ninf 0x1p-1\ninf 1\n1 0x1p-1\n1 1\n")
execute_process(COMMAND "${PYTHON}" -c "
import struct
values = [float('nan'), float('-inf'), float('nan'), float('inf'), 1.0, float('nan'), 0.0, 0.75, -0.0]
h = \"{'descr': '<f4', 'fortran_order': False, 'shape': (9,), }\"
h += ' ' * (63 - (10 + len(h)) % 64) + '\\n'
data = b''.join(struct.pack('<f', v) for v in values)
open('${WORK}/outputs.npy', 'wb').write(b'\\x93NUMPY\\x01\\x00' + struct.pack('<H', len(h)) + h.encode() + data)
" RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "could not write the outputs")
endif()

# Each cause's line (wrapped or not) and the replay line under it.
set(replay "[^\n]*(\n [^\n]*)?\n +replay: ulpgate explain --op tanh_bwd --input grad=")
ulpgate_expect(0
  "special mismatches of outputs: 7, by cause:\n"
  check --op tanh_bwd --inputs "${WORK}/inputs.txt" --outputs "${WORK}/outputs.npy" --quiet
  --json "${WORK}/check.json")
foreach(line
    "intermediate overflow or underflow [^\n]*: 2; the first at input #0:${replay}0x0p\\+0 --input t=0x1p\\+64\n"
    "NaN where the exact value is finite [^\n]*: 1; the first at input #2:${replay}0x1p\\+100 --input t=0x1p\\+64\n"
    "infinity where the exact value is finite [^\n]*: 1; the first at input #3:${replay}0x1p\\+100 "
    "finite where the exact value is infinite: 1; the first at input #4:${replay}inf --input t=0x1p-1\n"
    "NaN or the other infinity where the exact is infinite: 1; the first at input #5:${replay}inf "
    "a number where the exact value is undefined: 1; the first at input #6:${replay}inf --input t=0x1p\\+0\n"
    "signed zero [^\n]*: 1; the first at input #8:${replay}0x1p\\+0 --input t=0x1p\\+0\n")
  ulpgate_expect(0 "${line}" check --op tanh_bwd --inputs "${WORK}/inputs.txt" --outputs "${WORK}/outputs.npy"
    --quiet)
endforeach()
# The JSON: every cause with its count and first input, the total kept.
file(READ "${WORK}/check.json" json)
string(JSON total GET "${json}" results 0 special_mismatch)
if(NOT total EQUAL 7)
  message(FATAL_ERROR "special_mismatch ${total}, expected 7")
endif()
foreach(cause_count_first intermediate_overflow:2:0 nan_where_finite:1:2 infinity_where_finite:1:3
    finite_where_infinite:1:4 wrong_infinity:1:5 number_where_undefined:1:6)
  string(REPLACE ":" ";" parts "${cause_count_first}")
  list(GET parts 0 cause)
  list(GET parts 1 count)
  list(GET parts 2 first)
  string(JSON got_count GET "${json}" results 0 special_mismatch_causes ${cause} count)
  string(JSON got_first GET "${json}" results 0 special_mismatch_causes ${cause} first_input index)
  if(NOT got_count EQUAL count OR NOT got_first EQUAL first)
    message(FATAL_ERROR "${cause}: count ${got_count}, first ${got_first}; expected ${count}, ${first}")
  endif()
endforeach()
string(JSON first GET "${json}" results 0 first_signed_zero_input index)
if(NOT first EQUAL 8)
  message(FATAL_ERROR "first_signed_zero_input ${first}, expected 8")
endif()

# run: the cause with its first input and the replay of that input alone,
# in text, JSON and the HTML report (beside check's causes).
file(WRITE "${WORK}/bf16.txt" "0 0x1p+64\n0x1p-10 0x1p+64\n1 0x1p-1\n")
ulpgate_expect(0
  "special mismatches of mulsub_opmath on SCALAR: 2, by cause:\n +intermediate overflow or underflow [^\n]*: 2; the first at input #0:[^\n]*(\n [^\n]*)?\n +replay: echo '0x0p\\+0 0x1p\\+64' \\| ulpgate run --op tanh_bwd --dtype bf16 --variant mulsub_opmath --target SCALAR"
  run --op tanh_bwd --dtype bf16 --variant mulsub_opmath --target SCALAR --inputs "${WORK}/bf16.txt"
  --json "${WORK}/run.json")
file(READ "${WORK}/run.json" json)
string(JSON count GET "${json}" results 0 special_mismatch_causes intermediate_overflow count)
if(NOT count EQUAL 2)
  message(FATAL_ERROR "run: intermediate_overflow count ${count}, expected 2")
endif()
ulpgate_expect(0 "report: 2 reports" report "${WORK}/run.json" "${WORK}/check.json" --html "${WORK}/report.html")
file(READ "${WORK}/report.html" html)
foreach(text
    "intermediate overflow or underflow (exact finite and in range, output NaN or inf): 2, the first at grad = 0x0p+0, t = 0x1p+64 (#0); replay: <code class='replay'><span>echo</span> <span>&#39;0x0p+0</span> <span>0x1p+64&#39;</span>"
    "a number where the exact value is undefined: 1, the first at grad = inf, t = 0x1p+0 (#6)")
  string(FIND "${html}" "${text}" at)
  if(at LESS 0)
    message(FATAL_ERROR "report.html lacks: ${text}")
  endif()
endforeach()

# bf16 pairs at grad = 0x0013 (a subnormal, 0x1.3p-129) and every t:
# mulsub_opmath rounds grad * (1 - t*t) from float once, a hair over half an
# ULP where the float product was itself rounded (0.5000090599 at t = 0x1.4p+12,
# which a table of 4 digits rounded to nearest showed as 0.5); t*t overflows
# binary32 for |t| >= 2^64, where 1 - t*t is -inf and grad * -inf an infinity
# where x is finite. The maximum must read above 0.5, the specials by cause.
ulpgate_expect(0
  "mulsub_opmath +SCALAR +0\\.5001 .*mulsub_opmath@SCALAR worst: 0\\.5001 ULP at grad = 0x1\\.3p-129 \\(0x0013\\), t = 0x1\\.4p\\+12.*special mismatches of mulsub_opmath@SCALAR[^\n]*: 16384, by cause:\n +intermediate overflow or underflow [^\n]*: 16384; the first at grad =[ \n]+0x1\\.3p-129 \\(0x0013\\), t = 0x1p\\+64 \\(0x5f80\\)"
  sweep --dtype bf16 --variant mulsub_opmath --target SCALAR --range 0x130000:0x140000 --quiet)
