// NumPy files in and out: round trips, the dtypes a 16-bit format may come
// in, and malformed files as one-line errors.
#include "suites/inputs/numpy_files.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <tuple>
#include <unistd.h>
#include <string>
#include <system_error>
#include <vector>

#include "suites/inputs/inputs.h"

namespace ulpgate {
namespace {

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("ulpgate_numpy_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

// An .npy image written by hand from the format's definition (NumPy's
// format.py: magic, version 1.0, little-endian header length, a dict padded
// with spaces and ended by a newline to a multiple of 64, then the data).
std::string NpyImage(const std::string& descr, const std::string& shape, const std::string& data,
                     bool fortran = false) {
  std::string header = "{'descr': '" + descr + "', 'fortran_order': " +
                       (fortran ? "True" : "False") + ", 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string image = "\x93NUMPY";
  image += '\x01';
  image += '\x00';
  image += static_cast<char>(header.size() & 0xff);
  image += static_cast<char>(header.size() >> 8);
  return image + header + data;
}

std::string Bytes(const void* p, size_t n) { return std::string(static_cast<const char*>(p), n); }

// The files WriteFile made, removed when the test program ends (a run must
// leave nothing in the temporary directory).
struct WrittenFiles {
  std::vector<std::string> paths;
  ~WrittenFiles() {
    std::error_code ignored;
    for (const std::string& p : paths) std::filesystem::remove(p, ignored);
  }
};
WrittenFiles& Written() {
  static WrittenFiles files;
  return files;
}

std::string WriteFile(const std::string& name, const std::string& bytes) {
  const std::string path = TempPath(name);
  std::ofstream(path, std::ios::binary) << bytes;
  Written().paths.push_back(path);
  return path;
}

std::string ErrorOf(const std::string& path) {
  try {
    ReadNumpyFile(path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(read)";
}

TEST(NumpyFiles, NpzRoundTripKeepsNamesShapesAndBits) {
  const std::string path = TempPath("round.npz");
  const std::vector<float> grad = {1.5f, -0.0f, std::ldexp(1.0f, -149), INFINITY};
  const std::vector<float> t = {0.25f, 1.0f, -1.0f, 0.5f};
  WriteNumpyFile(path, {{"grad", {4}, grad}, {"t", {2, 2}, t}});
  const std::vector<NumpyArray> arrays = ReadNumpyFile(path);
  ASSERT_EQ(arrays.size(), 2u);
  EXPECT_EQ(arrays[0].name, "grad");
  EXPECT_EQ(arrays[0].dtype, "<f4");
  EXPECT_EQ(arrays[1].shape, (std::vector<size_t>{2, 2}));
  const std::vector<float> back = ArrayValues(arrays[0], kBinary32, "grad");
  ASSERT_EQ(back.size(), grad.size());
  EXPECT_EQ(0, std::memcmp(back.data(), grad.data(), grad.size() * sizeof(float)));
  std::filesystem::remove(path);
}

TEST(NumpyFiles, ANarrowFormatComesAsFloat32BitsOrItsOwnType) {
  // 1.5 in bf16 is 0x3fc0, in f16 0x3e00; -2 is 0xc000 in both.
  const uint16_t bf16_bits[] = {0x3fc0, 0xc000};
  const uint16_t f16_bits[] = {0x3e00, 0xc000};
  const float floats[] = {1.5f, -2.0f};
  for (const auto& [descr, bits, format] :
       {std::tuple{"<u2", bf16_bits, &kBFloat16}, std::tuple{"|V2", bf16_bits, &kBFloat16},
        std::tuple{"<V2", bf16_bits, &kBFloat16},
        std::tuple{"<u2", f16_bits, &kBinary16}, std::tuple{"<f2", f16_bits, &kBinary16}}) {
    const std::string path = WriteFile("narrow.npy", NpyImage(descr, "(2,)", Bytes(bits, 4)));
    const std::vector<float> v = ArrayValues(ReadNumpyFile(path)[0], *format, "a");
    EXPECT_EQ(v, (std::vector<float>{1.5f, -2.0f})) << descr << " " << format->name;
  }
  const std::string path = WriteFile("narrow.npy", NpyImage("<f4", "(2,)", Bytes(floats, 8)));
  EXPECT_EQ(ArrayValues(ReadNumpyFile(path)[0], kBFloat16, "a"), (std::vector<float>{1.5f, -2.0f}));
}

// The codes below are worked from the OCP FP8/MX definitions, not by the
// code under test: E4M3FN 0x3c = 0 0111 100 = 1.5, 0xc0 = -2^(8-7) = -2,
// 0x7e = 2^8 x 1.75 = 448; E5M2 0x3e = 0 01111 10 = 1.5; E2M1 0x3 = 0 01 1
// = 1.5, 0xc = 1 10 0 = -2.
TEST(NumpyFiles, EightSixAndFourBitFormatsComeAsMlDtypesVoidsCodesOrTheirName) {
  const uint8_t e4m3[] = {0x3c, 0xc0, 0x7e};
  for (const char* descr : {"|V1", "<V1", "|u1", "float8_e4m3fn"}) {
    const std::string path = WriteFile("fp8.npy", NpyImage(descr, "(3,)", Bytes(e4m3, 3)));
    const NumpyArray a = ReadNumpyFile(path)[0];
    EXPECT_EQ(ArrayValues(a, kFloat8E4M3FN, "a"), (std::vector<float>{1.5f, -2.0f, 448.0f})) << descr;
    // Only the name says which format; ml_dtypes' voids do not.
    EXPECT_EQ(NumpyFormat(a), std::string(descr) == "float8_e4m3fn" ? &kFloat8E4M3FN : nullptr)
        << descr;
  }
  // ml_dtypes (0.5.1) saves float8_e5m2 as "<f1", its dtype kind being 'f'.
  const uint8_t e5m2[] = {0x3e, 0xc0};
  const NumpyArray old = ReadNumpyFile(WriteFile("e5m2.npy", NpyImage("<f1", "(2,)", Bytes(e5m2, 2))))[0];
  EXPECT_EQ(NumpyFormat(old), &kFloat8E5M2);
  EXPECT_EQ(ArrayValues(old, kFloat8E5M2, "a"), (std::vector<float>{1.5f, -2.0f}));
  // ml_dtypes' float4_e2m1fn takes a byte per element; a code with bits
  // above its four is refused.
  const uint8_t e2m1[] = {0x3, 0xc, 0x13};
  const NumpyArray fp4 = ReadNumpyFile(WriteFile("fp4.npy", NpyImage("|V1", "(3,)", Bytes(e2m1, 3))))[0];
  try {
    ArrayValues(fp4, kFloat4E2M1FN, "fp4.npy");
    FAIL() << "accepted 0x13 as a 4-bit code";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "fp4.npy: element 2 = 0x13 is not a 4-bit float4_e2m1fn code (first of the array)");
  }
  const NumpyArray fp4_ok = ReadNumpyFile(WriteFile("fp4.npy", NpyImage("|V1", "(2,)", Bytes(e2m1, 2))))[0];
  EXPECT_EQ(ArrayValues(fp4_ok, kFloat4E2M1FN, "a"), (std::vector<float>{1.5f, -2.0f}));
  // Read as f32, a 1-byte void asks for its format.
  try {
    ArrayValues(fp4_ok, kBinary32, "fp4.npy");
    FAIL() << "read 1-byte codes as f32";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("dtype '|V1' holds 8-bit values, read here as f32: pass --dtype FORMAT"),
              std::string::npos)
        << e.what();
  }
  // 16-bit codes are not an 8-bit format's.
  const uint16_t wide[] = {0x3c00};
  const NumpyArray u2 = ReadNumpyFile(WriteFile("u2.npy", NpyImage("<u2", "(1,)", Bytes(wide, 2))))[0];
  EXPECT_THROW(ArrayValues(u2, kFloat8E4M3FN, "u2.npy"), InputError);
}

TEST(NumpyFiles, AnEightOrFourBitFormatIsWrittenAsMlDtypesOneByteVoid) {
  for (const auto& [format, values, codes] :
       {std::tuple{&kFloat8E4M3FN, std::vector<float>{1.5f, -2.0f, 448.0f}, std::string("\x3c\xc0\x7e")},
        std::tuple{&kFloat4E2M1FN, std::vector<float>{1.5f, -2.0f, 6.0f}, std::string("\x03\x0c\x07")}}) {
    const std::string path = TempPath("fp8_out.npy");
    Written().paths.push_back(path);
    WriteNumpyFile(path, {{"x", {3}, values, format}});
    std::ifstream in(path, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_NE(bytes.find("'descr': '<V1'"), std::string::npos) << format->name;
    EXPECT_EQ(bytes.substr(bytes.size() - 3), codes) << format->name;
    EXPECT_EQ(ArrayValues(ReadNumpyFile(path)[0], *format, "x"), values) << format->name;
  }
  // A value the format lacks is refused, not rounded.
  EXPECT_THROW(WriteNumpyFile(TempPath("bad_fp8.npy"), {{"x", {1}, {1.0625f}, &kFloat8E4M3FN}}),
               InputError);
}

TEST(NumpyFiles, AValueOfAnotherFormatNamesTheFirstBadElement) {
  const float floats[] = {1.5f, 1.0f + std::ldexp(1.0f, -10), 3.0f};  // 1 + 2^-10 is no bf16
  const std::string path = WriteFile("bad.npy", NpyImage("<f4", "(3,)", Bytes(floats, 12)));
  try {
    ArrayValues(ReadNumpyFile(path)[0], kBFloat16, "out.npy");
    FAIL() << "accepted a value that is not bf16";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "out.npy: element 1 = 0x1.004p+0 is not a bf16 value (first of the array)");
  }
  EXPECT_NO_THROW(ArrayValues(ReadNumpyFile(path)[0], kBinary16, "out.npy"));
}

TEST(NumpyFiles, MalformedFilesAreOneLineErrors) {
  const float floats[] = {1.0f, 2.0f, 3.0f};
  const std::string good = NpyImage("<f4", "(3,)", Bytes(floats, 12));
  EXPECT_EQ(ErrorOf(WriteFile("text.npy", "grad t\n1 2\n")),
            TempPath("text.npy") + ": not a NumPy array (no \\x93NUMPY magic)");
  EXPECT_NE(ErrorOf(WriteFile("short.npy", good.substr(0, good.size() - 5)))
                .find("3 elements of 4 bytes need 12 bytes of data, the file has 7 (truncated)"),
            std::string::npos);
  EXPECT_NE(ErrorOf(WriteFile("header.npy", good.substr(0, 30))).find("truncated .npy header"),
            std::string::npos);
  EXPECT_NE(ErrorOf(WriteFile("big.npy", NpyImage(">f4", "(3,)", Bytes(floats, 12))))
                .find("is not little-endian"),
            std::string::npos);
  EXPECT_NE(ErrorOf(WriteFile("fortran.npy", NpyImage("<f4", "(1, 3)", Bytes(floats, 12), true)))
                .find("Fortran-order"),
            std::string::npos);
  EXPECT_NE(ErrorOf(WriteFile("huge.npy", NpyImage("<f4", "(1000000000000,)", Bytes(floats, 12))))
                .find("more elements than the file"),
            std::string::npos);
  EXPECT_NE(ErrorOf(WriteFile("notzip.npz", good)).find("not a readable .npz (zip) archive"),
            std::string::npos);
  EXPECT_NE(ErrorOf(TempPath("missing.npy")).find("cannot open"), std::string::npos);
  // An int32 array is read, and refused as values.
  const std::string ints = WriteFile("ints.npy", NpyImage("<i4", "(3,)", Bytes(floats, 12)));
  try {
    ArrayValues(ReadNumpyFile(ints)[0], kBinary32, "ints.npy");
    FAIL() << "accepted int32";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "ints.npy: dtype '<i4' cannot hold f32 values here (float32 or float64)");
  }
}

}  // namespace
}  // namespace ulpgate
