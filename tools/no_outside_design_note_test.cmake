# ctest driver: the project documents itself. No file a user gets may cite
# "DESIGN" ".md" (joined), a note that lives outside the repository; docs/design.md is the
# project's design document. -DROOT=<repository root>
set(needle "DESIGN")
string(APPEND needle ".md")
file(GLOB_RECURSE files LIST_DIRECTORIES false
  "${ROOT}/kernels/*" "${ROOT}/oracles/*" "${ROOT}/suites/*" "${ROOT}/tools/*"
  "${ROOT}/docs/*" "${ROOT}/ci/*" "${ROOT}/.ci/*" "${ROOT}/cmake/*" "${ROOT}/golden/*.json"
  "${ROOT}/examples/*")
list(APPEND files "${ROOT}/README.md" "${ROOT}/CMakeLists.txt" "${ROOT}/CMakePresets.json")
list(LENGTH files count)
if(count LESS 100)
  message(FATAL_ERROR "found only ${count} files under ${ROOT}: wrong ROOT?")
endif()
set(citing "")
foreach(f IN LISTS files)
  if(f MATCHES "/corpus/")
    continue()  # fuzz inputs, bytes not prose
  endif()
  file(STRINGS "${f}" hits REGEX "${needle}")
  if(hits)
    list(APPEND citing "${f}")
  endif()
endforeach()
if(citing)
  message(FATAL_ERROR "these files cite ${needle} (cite docs/design.md instead):\n${citing}")
endif()
message(STATUS "${count} files, none cites ${needle}")
