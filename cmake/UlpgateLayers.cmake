# The layering of the sources: kernels/ reaches neither suites/ (nor tools/)
# nor MPFR or GMP, directly or through a header it includes (quoted includes
# are followed through the project's own files). docs/design.md
# "Architecture". And an op's folder kernels/ops/<op>/ holds headers only: its
# sources are its oracle part, suites/engine/ops/<op>/. Two ways in:
#   include(UlpgateLayers) then ulpgate_check_layers(<project dir>): at
#     configure time, FATAL_ERROR on a violation;
#   cmake -DROOT=<project dir> -P cmake/UlpgateLayers.cmake: the ctest
#     kernels_layering, a nonzero exit status on a violation.

if(CMAKE_SCRIPT_MODE_FILE)
  cmake_minimum_required(VERSION 3.25)
endif()

# Names a kernels/ file may not include, directly or through another.
set(ULPGATE_KERNELS_FORBIDDEN "^(suites/|tools/|mpfr\\.h$|mpf2mpfr\\.h$|gmp\\.h$|gmpxx\\.h$|boost/multiprecision/)")

# Sets <out_var> to the violations found under <root>/kernels, one a line.
function(ulpgate_layer_violations root out_var)
  file(GLOB_RECURSE sources RELATIVE ${root}
    ${root}/kernels/*.h ${root}/kernels/*.cc ${root}/kernels/*.c ${root}/kernels/*.inc)
  set(violations "")
  foreach(start IN LISTS sources)
    # Breadth-first through the quoted includes that are project files.
    set(queue ${start})
    set(seen ${start})
    set(via_${start} "")
    while(queue)
      list(POP_FRONT queue file)
      file(STRINGS ${root}/${file} lines REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"][^>\"]+[>\"]")
      foreach(line IN LISTS lines)
        string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*[<\"]([^>\"]+)[>\"].*" "\\1" name "${line}")
        if(name MATCHES "${ULPGATE_KERNELS_FORBIDDEN}")
          set(chain "${via_${file}}${file}")
          list(APPEND violations "${start} includes ${name} (${chain})")
        elseif("${line}" MATCHES "\"" AND EXISTS ${root}/${name} AND NOT name IN_LIST seen)
          list(APPEND seen ${name})
          list(APPEND queue ${name})
          set(via_${name} "${via_${file}}${file} -> ")
        endif()
      endforeach()
    endwhile()
  endforeach()
  # An op's folder holds headers only (kernels/CMakeLists.txt compiles none of
  # its sources): an op's sources are its oracle part, suites/engine/ops/<op>/.
  file(GLOB op_sources RELATIVE ${root} ${root}/kernels/ops/*/*.cc ${root}/kernels/ops/*/*.c)
  foreach(source IN LISTS op_sources)
    list(APPEND violations "${source}: an op's sources belong to suites/engine/ops/<op>/")
  endforeach()
  list(REMOVE_DUPLICATES violations)
  set(${out_var} "${violations}" PARENT_SCOPE)
endfunction()

function(ulpgate_check_layers root)
  ulpgate_layer_violations(${root} violations)
  if(violations)
    list(JOIN violations "\n  " text)
    message(FATAL_ERROR "kernels/ breaks its layering (docs/design.md \"Architecture\"): "
      "it may not reach suites/, tools/, MPFR or GMP, nor hold an op's source:\n  ${text}")
  endif()
endfunction()

# The kernels' libraries link no oracle or suites library, nor MPFR or GMP:
# run once every directory has added its links (cmake_language(DEFER)).
function(ulpgate_check_kernel_links)
  foreach(target ulpgate_kernel_support ulpgate_kernels)
    get_target_property(links ${target} LINK_LIBRARIES)
    get_target_property(interface ${target} INTERFACE_LINK_LIBRARIES)
    foreach(link IN LISTS links interface)
      if(link MATCHES "MPFR|GMP|mpfr|gmp|ulpgate_oracles|ulpgate::oracles|ulpgate_suite|ulpgate::suites")
        message(FATAL_ERROR "${target} links ${link}: the kernels link no oracle or suites "
          "library, nor MPFR (docs/design.md \"Architecture\")")
      endif()
    endforeach()
  endforeach()
endfunction()

if(CMAKE_SCRIPT_MODE_FILE AND CMAKE_SCRIPT_MODE_FILE STREQUAL CMAKE_CURRENT_LIST_FILE)
  if(NOT ROOT)
    message(FATAL_ERROR "usage: cmake -DROOT=<project dir> -P UlpgateLayers.cmake")
  endif()
  ulpgate_layer_violations(${ROOT} violations)
  if(violations)
    list(JOIN violations "\n  " text)
    message(FATAL_ERROR "kernels/ breaks its layering (docs/design.md \"Architecture\"): "
      "it may not reach suites/, tools/, MPFR or GMP, nor hold an op's source:\n  ${text}")
  endif()
  message("kernels/ reaches neither suites/, tools/, MPFR nor GMP, and its op folders hold headers only")
endif()
