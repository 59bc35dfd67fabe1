# Cross-compiling the IUT for 64-bit ARM (preset aarch64): Debian's
# g++-aarch64-linux-gnu, and the arm64 Highway and fmt from multiarch
# (dpkg --add-architecture arm64; ci/setup.sh installs them). The programs run
# under qemu-aarch64, which finds the arm64 C library under /usr/aarch64-linux-gnu.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
# Packages of the target's architecture only: the amd64 Highway's config must
# not be found for an arm64 build.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu /usr/lib/aarch64-linux-gnu/cmake)
set(CMAKE_PREFIX_PATH /usr/lib/aarch64-linux-gnu/cmake)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64;-L;/usr/aarch64-linux-gnu)
