# ctest driver: `ulpgate check` and `suite export` as a user meets them: exported
# suites read back in every file form, the exit status of --max-ulp,
# --max-bound-fraction and --require-model, and each kind of bad input as one
# error line with exit 2.
# Variables: ULPGATE, PYTHON, PEER (suites/peer/torch-2.11-h100), WORK.
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

include("${CMAKE_CURRENT_LIST_DIR}/cli_expect.cmake")

set(bf16 "${PEER}/tanh_bf16.npz")
set(f32 "${PEER}/tanh_f32.npz")

# Exported suites read back as inputs: .npz, .npy [2, n] and text.
foreach(form npz npy txt)
  ulpgate_expect(0 "wrote 1000 inputs" suite export --suite domain --dtype bf16 --n 1000 --seed 3
    --out "${WORK}/domain.${form}")
endforeach()
foreach(form npz npy txt)
  ulpgate_expect(0 "follows no model bit for bit" check --dtype bf16 --inputs "${WORK}/domain.${form}"
    --outputs "${WORK}/domain.npz:t" --quiet)
endforeach()

# A reduction round trip: an exported instance, ulpgate's own pairwise kernel's outputs
# on it (from run --dump, written as .npy), recognized by check as the pairwise model.
ulpgate_expect(0 "wrote 1 instance of linear_fwd" suite export --op linear_fwd --shape 5,7,3 --out "${WORK}/lf.npz")
ulpgate_expect(0 "wrote 2 instances of linear_fwd" suite export --op linear_fwd --shape 5,7,3 --n 2 --out "${WORK}/lf2.npz")
ulpgate_expect(0 "" run --kernel linear_fwd --shape 5,7,3 --n 1 --variant pairwise --target SCALAR
  --dump "${WORK}/lf.jsonl" --quiet)
execute_process(COMMAND "${PYTHON}" -c "
import json, struct
outputs = json.loads(open('${WORK}/lf.jsonl').readline())['results'][0]['outputs']
h = \"{'descr': '<f4', 'fortran_order': False, 'shape': (5, 3), }\"
h += ' ' * (63 - (10 + len(h)) % 64) + '\\n'
data = b''.join(struct.pack('<f', float.fromhex(v)) for v in outputs)
open('${WORK}/lf_out.npy', 'wb').write(b'\\x93NUMPY\\x01\\x00' + struct.pack('<H', len(h)) + h.encode() + data)
" RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "could not convert the dump")
endif()
ulpgate_expect(0 "within the f32 error bound.*follows bit for bit: pairwise" check --op linear_fwd
  --inputs "${WORK}/lf.npz" --outputs "${WORK}/lf_out.npy")
# --max-bound-fraction: the pairwise sum errs 0.151 of its bound.
ulpgate_expect(0 "check: PASS" check --op linear_fwd --inputs "${WORK}/lf.npz" --outputs "${WORK}/lf_out.npy"
  --max-bound-fraction 0.2)
ulpgate_expect(1 "lf_out: max bound fraction 0.1511 above --max-bound-fraction 0.15 \\(0 outputs above the bound\\)\ncheck: FAIL"
  check --op linear_fwd --inputs "${WORK}/lf.npz" --outputs "${WORK}/lf_out.npy"
  --max-bound-fraction 0.15)
ulpgate_expect(2 "lf_out.npy:lf_out: 15 outputs, 2 instances of linear_fwd 5,7,3 give 30" check --op linear_fwd
  --inputs "${WORK}/lf2.npz" --outputs "${WORK}/lf_out.npy")

# Exit status: 0 within the limits, 1 outside them.
ulpgate_expect(0 "check: PASS" check --dtype bf16 --inputs "${bf16}" --outputs "${bf16}:cuda_compiled_aten"
  --require-model mulsub_opmath --quiet)
ulpgate_expect(1 "does not follow mulsub_opmath" check --dtype bf16 --inputs "${bf16}"
  --outputs "${bf16}:cuda_aten" --require-model mulsub_opmath --quiet)
ulpgate_expect(1 "max ULP error 6.4 above --max-ulp 1" check --dtype bf16 --inputs "${bf16}"
  --outputs "${bf16}:cuda_aten" --max-ulp 1 --quiet)
# t as the outputs of tanh_bwd: up to 9909.x times (printed rounded up, 9910) the backward-stable bound.
ulpgate_expect(1 "t: max bound fraction 9910 above --max-bound-fraction 1 \\(994 outputs above the bound\\)"
  check --dtype bf16 --inputs "${WORK}/domain.npz" --outputs "${WORK}/domain.npz:t" --max-bound-fraction 1 --quiet)
ulpgate_expect(0 "check: PASS" check --dtype bf16 --inputs "${WORK}/domain.npz" --outputs "${WORK}/domain.npz:t"
  --max-bound-fraction 1e4 --quiet --json "${WORK}/bound.json")
file(READ "${WORK}/bound.json" bound_json)
string(JSON bound_verdict GET "${bound_json}" verdict)
if(NOT bound_verdict STREQUAL "PASS")
  message(FATAL_ERROR "--max-bound-fraction 1e4: verdict ${bound_verdict} in the JSON report")
endif()
# A models file (a CMake list would split the statements at ';'). Python's
# grad - grad*t*t is (grad*t)*t, built in as mac_left_fused: the user's model of
# the same sequence is followed beside it, the built-ins first.
file(WRITE "${WORK}/models.txt" "# Python's grad - grad*t*t is (grad*t)*t\n"
  "mac_left: p = grad*t; out = fma(-p, t, grad)\n\n"
  "mac_right: r = t*t; q = grad*r; out = grad - q\n")
ulpgate_expect(0 "follows bit for bit: mac_left_fused, mac_left\n" check --inputs "${f32}"
  --outputs "${f32}:cuda_compiled_mac_left" --models "${WORK}/models.txt" --quiet)
ulpgate_expect(0 "follows bit for bit: mac_left_fused\n" check --inputs "${f32}"
  --outputs "${f32}:cuda_compiled_mac_left" --quiet)
file(WRITE "${WORK}/bad_models.txt" "mac_left: p = grad*t\nm2: out = fma(grad, t)\n")
ulpgate_expect(2 "bad_models.txt:1: model 'mac_left', column 21: no 'out = ...'" check --inputs "${f32}"
  --outputs "${f32}:cpu_aten" --models "${WORK}/bad_models.txt")
ulpgate_expect(2 "--model: model 'mulsub' is already defined \\(a built-in model\\)" check --inputs "${f32}"
  --outputs "${f32}:cpu_aten" --model "mulsub: out = grad")

# Bad input: one line each, exit 2.
ulpgate_expect(2 "--require-model nosuch: unknown model \\(mac_fused_opmath," check --dtype bf16
  --inputs "${bf16}" --outputs "${bf16}:cuda_aten" --require-model nosuch)
ulpgate_expect(2 "--model: model 'm', column 17: expected '\\)', found the end" check --dtype bf16
  --inputs "${bf16}" --outputs "${bf16}:cuda_aten" --model "m: out = grad*(t")
ulpgate_expect(2 "--model: model 'm', column 10: unknown name 'x'" check --inputs "${f32}"
  --outputs "${f32}:cpu_aten" --model "m: out = x*t")
ulpgate_expect(2 "1000 outputs for 16384 inputs: the shapes differ" check --dtype bf16 --inputs "${bf16}"
  --outputs "${WORK}/domain.npz:t")
ulpgate_expect(2 "tanh_f32.npz:grad: element 0 = .* is not a bf16 value" check --dtype bf16
  --inputs "${f32}" --outputs "${bf16}:cuda_aten")
ulpgate_expect(2 "holds several output arrays: name one" check --dtype bf16 --inputs "${bf16}" --outputs "${bf16}")
ulpgate_expect(2 "no array 'nosuch' \\(arrays: grad, t," check --dtype bf16 --inputs "${bf16}"
  --outputs "${bf16}:nosuch")
ulpgate_expect(2 "unknown --dtype 'f64' for tanh_bwd \\(f32, bf16, f16\\)" check --dtype f64 --inputs "${f32}"
  --outputs "${f32}:cpu_aten")
ulpgate_expect(2 "the reductions take an .npz with arrays x, w, b" check --op linear_fwd --inputs "${WORK}/domain.txt"
  --outputs "${f32}:cpu_aten")
# Files that are not what they claim: float16 for bf16, truncated, not NumPy.
execute_process(COMMAND "${PYTHON}" -c "
import struct
h = \"{'descr': '<f2', 'fortran_order': False, 'shape': (1000,), }\"
h += ' ' * (63 - (10 + len(h)) % 64) + '\\n'
open('${WORK}/half.npy', 'wb').write(b'\\x93NUMPY\\x01\\x00' + struct.pack('<H', len(h)) + h.encode() + b'\\x00\\x3c' * 1000)
data = open('${WORK}/domain.npy', 'rb').read()
open('${WORK}/short.npy', 'wb').write(data[:len(data) - 6])
" RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "could not write the test files")
endif()
ulpgate_expect(2 "half.npy:half: dtype '<f2' cannot hold bf16 values here" check --dtype bf16
  --inputs "${WORK}/domain.npz" --outputs "${WORK}/half.npy")
ulpgate_expect(2 "short.npy: 2000 elements of 2 bytes need 4000 bytes of data, the file has 3994 \\(truncated\\)"
  check --dtype bf16 --inputs "${WORK}/short.npy" --outputs "${WORK}/domain.npz:t")
file(COPY_FILE "${WORK}/domain.txt" "${WORK}/text.npy")
ulpgate_expect(2 "text.npy: not a NumPy array" check --dtype bf16 --inputs "${WORK}/domain.npz"
  --outputs "${WORK}/text.npy")
