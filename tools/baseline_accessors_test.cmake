# ctest driver: every per-target accessor this binary exports with HWY_EXPORT
# (found by its <Name>HighwayDispatchTable; an accessor takes no arguments)
# must be plain x86-64 code in every target's copy. Exports that take
# arguments (the sweep tier's) are called through HWY_DYNAMIC_DISPATCH on the
# chosen target only and are not checked. The registries call such an accessor through the dispatch
# table for every compiled target, also those this CPU lacks, so one
# instruction beyond the baseline in, say, N_AVX3::GetTargetKernels is an
# illegal instruction on every CPU without AVX-512 (GCC filled a by-value
# struct with pinsrq on SSE4 and vinserti128 on AVX2 and AVX3).
# Needs -DBINARY=<program> -DNM=<nm> -DOBJDUMP=<objdump>.

execute_process(COMMAND "${NM}" -C --defined-only "${BINARY}"
  RESULT_VARIABLE status OUTPUT_VARIABLE symbols ERROR_VARIABLE errors)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "nm ${BINARY}: status ${status}\n${errors}")
endif()

# "ulpgate::GetTargetKernelsHighwayDispatchTable" -> ulpgate, GetTargetKernels.
string(REGEX MATCHALL "[A-Za-z0-9_:]+HighwayDispatchTable" tables "${symbols}")
list(REMOVE_DUPLICATES tables)
# The targets compiled in, from the namespaces Highway gives them; SCALAR and
# EMU128 are baseline code by construction.
string(REGEX MATCHALL "::N_[A-Z0-9_]+::" namespaces "${symbols}")
list(REMOVE_DUPLICATES namespaces)
list(FILTER namespaces EXCLUDE REGEX "^::N_(SCALAR|EMU128)::$")
if(NOT tables OR NOT namespaces)
  message(FATAL_ERROR "found no HWY_EXPORT tables or no per-target namespaces in ${BINARY}: "
    "this check would pass vacuously (stripped binary?)")
endif()

# Mnemonics and operands the x86-64 baseline (SSE2) lacks. A VEX or EVEX
# encoding disassembles as a v-prefixed mnemonic (vmovq, vpinsrq, vinserti128,
# vzeroupper); AVX-512 also shows as ymm/zmm, k registers and xmm16 and up.
set(beyond_baseline
  "^v"                                                         # AVX, AVX2, AVX-512 (VEX/EVEX)
  "^k[a-z]"                                                    # AVX-512 mask instructions
  "%([yz]mm[0-9]|k[0-7]([^0-9]|$)|xmm(1[6-9]|[23][0-9]))"      # AVX/AVX-512 registers
  "^(addsubp[sd]|h(add|sub)p[sd]|movddup|movs[hl]dup|lddqu|fisttp)"  # SSE3
  "^(pshufb|ph(add|sub)|pmaddubsw|pmulhrsw|psign|pabs|palignr)"      # SSSE3
  "^(pinsr[bdq]|pextr[bdq]|ptest|p?blend|pmov[sz]x|pmul[dl]d|pcmpeqq|packusdw|round[ps][sd]|dpp[sd]|insertps|extractps|movntdqa|mpsadbw|phminposuw|pmin(sb|sd|ud|uw)|pmax(sb|sd|ud|uw))"  # SSE4.1
  "^(pcmpgtq|pcmp[ei]str[im]|crc32|popcnt)"                    # SSE4.2
  "^(lzcnt|tzcnt|andn|bextr|bls(i|msk|r)|bzhi|pdep|pext|mulx|rorx|sarx|shlx|shrx|movbe)"  # BMI, LZCNT, MOVBE
  "^(aes|pclmul|sha|gf2p8)")                                   # AES, CLMUL, SHA, GFNI

set(failures "")
set(checked 0)
set(accessor_tables "")
foreach(table IN LISTS tables)
  string(REGEX REPLACE "::([A-Za-z0-9_]+)HighwayDispatchTable$" "" scope "${table}")
  string(REGEX REPLACE "^.*::([A-Za-z0-9_]+)HighwayDispatchTable$" "\\1" name "${table}")
  # An export whose copies all take arguments is not an accessor.
  if(NOT symbols MATCHES "${scope}::N_[A-Z0-9_]+::${name}\\(\\)")
    continue()
  endif()
  list(APPEND accessor_tables "${table}")
  foreach(namespace IN LISTS namespaces)
    set(function "${scope}${namespace}${name}()")
    execute_process(COMMAND "${OBJDUMP}" -d -C --no-show-raw-insn "--disassemble=${function}"
      "${BINARY}" RESULT_VARIABLE status OUTPUT_VARIABLE listing ERROR_VARIABLE errors)
    if(NOT status EQUAL 0)
      message(FATAL_ERROR "objdump ${function}: status ${status}\n${errors}")
    endif()
    string(FIND "${listing}" "<${function}>:" at)
    if(at EQUAL -1)
      # HWY_EXPORT names one function per compiled target: a missing one means
      # this script no longer finds what it checks.
      string(APPEND failures "${function}: not found in ${BINARY}\n")
      continue()
    endif()
    math(EXPR checked "${checked} + 1")
    string(REPLACE "\n" ";" lines "${listing}")
    foreach(line IN LISTS lines)
      # "  185da0:\tlea    0x88819(%rip),%rax  # ...": mnemonic, then operands.
      if(NOT line MATCHES "^ *[0-9a-f]+:\t([a-z0-9]+)( +([^#]*))?")
        continue()
      endif()
      set(mnemonic "${CMAKE_MATCH_1}")
      set(operands "${CMAKE_MATCH_3}")
      foreach(pattern IN LISTS beyond_baseline)
        if(mnemonic MATCHES "${pattern}" OR (pattern MATCHES "^%" AND operands MATCHES "${pattern}"))
          string(REGEX REPLACE "[ \t]+" " " line "${line}")
          string(APPEND failures "  ${function}:${line}\n")
          break()
        endif()
      endforeach()
    endforeach()
  endforeach()
endforeach()

if(failures)
  # NOTICE prints the lines as they are; FATAL_ERROR would rewrap them.
  message(NOTICE "${failures}")
  message(FATAL_ERROR "per-target accessors above use instructions beyond x86-64 baseline; "
    "they run for every compiled target, so a CPU without that target gets SIGILL. Return the "
    "address of a constant-initialized table instead (kernels/registry.cc).")
endif()
list(JOIN accessor_tables ", " table_names)
message(STATUS "${checked} per-target accessors of ${table_names}: baseline x86-64 code only")
