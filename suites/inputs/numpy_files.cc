#include "suites/inputs/numpy_files.h"

#include <zip.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <xtensor/xadapt.hpp>
#include <xtensor/xnpy.hpp>

#include "oracles/format.h"
#include "suites/inputs/inputs.h"

namespace ulpgate {

namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// One .npy image. The magic and the header dictionary are xtensor's to read
// (read_magic, parse_header); the header length is read here, because
// xtensor 0.24's read_header_1_0 sign-extends its bytes (a header of 128
// bytes or more would be misread), and the data is checked against the shape
// before anything is allocated, so a truncated or lying file is an error,
// not a huge allocation.
NumpyArray ParseNpy(const std::string& bytes, const std::string& where) {
  std::istringstream stream(bytes);
  unsigned char major = 0, minor = 0;
  try {
    xt::detail::read_magic(stream, &major, &minor);
  } catch (const std::exception&) {
    throw InputError(where + ": not a NumPy array (no \\x93NUMPY magic)");
  }
  const size_t length_bytes = major == 1 ? 2 : (major == 2 || major == 3) ? 4 : 0;
  if (length_bytes == 0) {
    throw InputError(fmt::format("{}: unsupported .npy version {}.{}", where, major, minor));
  }
  unsigned char len[4] = {0, 0, 0, 0};
  if (!stream.read(reinterpret_cast<char*>(len), static_cast<std::streamsize>(length_bytes))) {
    throw InputError(where + ": truncated .npy header");
  }
  const size_t header_length = len[0] | (len[1] << 8) | (size_t{len[2]} << 16) | (size_t{len[3]} << 24);
  const size_t data_start = 8 + length_bytes + header_length;
  if (data_start > bytes.size()) throw InputError(where + ": truncated .npy header");
  NumpyArray array;
  bool fortran_order = false;
  std::string header = bytes.substr(8 + length_bytes, header_length);
  // xtensor's header check knows the numeric kinds only. The types it does
  // not know are read as unsigned integers of their width and named by their
  // own type string again below: the voids NumPy writes for ml_dtypes' types
  // ("|V2" or "<V2" for bfloat16, "|V1" or "<V1" for each 8-, 6- and 4-bit
  // one, one element a byte), "<f1" (ml_dtypes' float8_e5m2, whose dtype kind is 'f'), and a
  // registered format's name (what writing str(dtype) as the descr gives).
  std::string unknown_descr;
  const size_t descr_key = header.find("'descr'");
  if (descr_key != std::string::npos) {
    const size_t open = header.find('\'', descr_key + 7);
    const size_t close = open == std::string::npos ? open : header.find('\'', open + 1);
    if (close != std::string::npos) {
      const std::string descr = header.substr(open + 1, close - open - 1);
      const FloatFormat* named = FindFormat(descr);
      std::string stand_in;
      if (descr == "|V2" || descr == "<V2") {
        stand_in = "<u2";
      } else if (descr == "|V1" || descr == "<V1" || descr == "<f1" || descr == "|f1") {
        stand_in = "|u1";
      } else if (named != nullptr && named->bits <= 16) {
        stand_in = fmt::format("{}u{}", named->storage_bytes() == 1 ? '|' : '<', named->storage_bytes());
      }
      if (!stand_in.empty()) {
        unknown_descr = descr == "<V2" ? "|V2" : descr == "<V1" ? "|V1" : descr == "|f1" ? "<f1" : descr;
        header.replace(open + 1, close - open - 1, stand_in);
      }
    }
  }
  try {
    xt::detail::parse_header(header, array.dtype, &fortran_order, array.shape);
  } catch (const std::exception& e) {
    throw InputError(where + ": malformed .npy header (" + e.what() + ")");
  }
  size_t word = 0;
  if (!unknown_descr.empty()) {
    word = array.dtype.size() > 2 ? std::stoul(array.dtype.substr(2)) : 0;
    array.dtype = unknown_descr;
  }
  if (fortran_order && array.shape.size() > 1) {
    throw InputError(where + ": a Fortran-order array; save it in C order (np.ascontiguousarray)");
  }
  if (array.dtype.size() < 3 || array.dtype[0] == '>') {
    throw InputError(where + ": dtype '" + array.dtype +
                     "' is not little-endian float32, float64, float16, uint16 or bfloat16");
  }
  try {
    if (word == 0) word = std::stoul(array.dtype.substr(2));
  } catch (const std::exception&) {
    throw InputError(where + ": dtype '" + array.dtype + "' has no element size");
  }
  size_t count = 1;
  for (size_t extent : array.shape) {
    if (extent != 0 && count > (bytes.size() / extent)) {
      throw InputError(where + ": the shape holds more elements than the file");
    }
    count *= extent;
  }
  const size_t available = bytes.size() - data_start;
  if (word == 0 || count > available / word || count * word != available) {
    throw InputError(fmt::format("{}: {} elements of {} bytes need {} bytes of data, the file has {}{}",
                                 where, count, word, count * word, available,
                                 count * word > available ? " (truncated)" : ""));
  }
  array.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(data_start), bytes.end());
  return array;
}

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) throw InputError(path + ": read failed");
  return buffer.str();
}

struct ZipCloser {
  void operator()(zip_t* z) const { zip_discard(z); }
};

std::vector<NumpyArray> ReadNpz(const std::string& path) {
  int error = 0;
  std::unique_ptr<zip_t, ZipCloser> archive(zip_open(path.c_str(), ZIP_RDONLY, &error));
  if (!archive) {
    zip_error_t z;
    zip_error_init_with_code(&z, error);
    const std::string why = zip_error_strerror(&z);
    zip_error_fini(&z);
    throw InputError(path + ": not a readable .npz (zip) archive: " + why);
  }
  std::vector<NumpyArray> arrays;
  const zip_int64_t entries = zip_get_num_entries(archive.get(), 0);
  for (zip_int64_t i = 0; i < entries; ++i) {
    zip_stat_t st;
    if (zip_stat_index(archive.get(), static_cast<zip_uint64_t>(i), 0, &st) != 0) {
      throw InputError(path + ": unreadable archive member " + std::to_string(i));
    }
    std::string name = st.name;
    if (!EndsWith(name, ".npy")) continue;
    const std::string where = path + ":" + name;
    std::unique_ptr<zip_file_t, int (*)(zip_file_t*)> file(
        zip_fopen_index(archive.get(), static_cast<zip_uint64_t>(i), 0), &zip_fclose);
    if (!file) throw InputError(where + ": cannot open: " + zip_strerror(archive.get()));
    std::string bytes(static_cast<size_t>(st.size), '\0');
    const zip_int64_t read = zip_fread(file.get(), bytes.data(), st.size);
    if (read < 0 || static_cast<zip_uint64_t>(read) != st.size) {
      throw InputError(where + ": truncated or corrupt member");
    }
    NumpyArray array = ParseNpy(bytes, where);
    array.name = name.substr(0, name.size() - 4);
    arrays.push_back(std::move(array));
  }
  if (arrays.empty()) throw InputError(path + ": the archive holds no .npy arrays");
  return arrays;
}

}  // namespace

size_t NumpyArray::size() const {
  size_t n = 1;
  for (size_t e : shape) n *= e;
  return n;
}

bool IsNumpyPath(const std::string& path) { return EndsWith(path, ".npy") || EndsWith(path, ".npz"); }
bool IsNpzPath(const std::string& path) { return EndsWith(path, ".npz"); }

ArraySpec SplitArraySpec(const std::string& spec) {
  const size_t colon = spec.rfind(':');
  if (colon != std::string::npos && IsNumpyPath(spec.substr(0, colon))) {
    return {spec.substr(0, colon), spec.substr(colon + 1)};
  }
  return {spec, ""};
}

std::vector<NumpyArray> ReadNumpyFile(const std::string& path) {
  if (EndsWith(path, ".npz")) return ReadNpz(path);
  NumpyArray array = ParseNpy(ReadWholeFile(path), path);
  array.name = std::filesystem::path(path).stem().string();
  return {std::move(array)};
}

namespace {

bool SameEncoding(const FloatFormat& a, const FloatFormat& b) {
  return a.precision == b.precision && a.emin == b.emin && a.emax == b.emax && a.bits == b.bits &&
         a.nan == b.nan && a.has_sign == b.has_sign && a.has_subnormals == b.has_subnormals;
}

// NumPy's own float type for the format, "<f2", "<f4", "<f8", or "" for a
// format NumPy has none for.
std::string NumpyFloatDescr(const FloatFormat& format) {
  for (const FloatFormat* f : {&kBinary16, &kBinary32, &kBinary64}) {
    if (SameEncoding(format, *f)) return fmt::format("<f{}", f->storage_bytes());
  }
  return "";
}

// How an array's dtype holds elements: as values (float32, float64), or as
// codes of some format, `bytes` little-endian bytes each.
struct Storage {
  bool values = false;
  const FloatFormat* codes_of = nullptr;  // the format the codes are in; nullptr: the one asked for
  int bytes = 0;
};

std::optional<Storage> StorageOf(const std::string& dtype) {
  const std::string kind = dtype.substr(1);
  if (kind == "f4" || kind == "f8") return Storage{true, nullptr, kind == "f4" ? 4 : 8};
  if (kind == "f2") return Storage{false, &kBinary16, 2};
  if (dtype == "<f1") return Storage{false, &kFloat8E5M2, 1};  // ml_dtypes' float8_e5m2
  if (const FloatFormat* named = FindFormat(dtype); named != nullptr && named->bits <= 16) {
    return Storage{false, named, named->storage_bytes()};
  }
  // ml_dtypes' bfloat16 is the one 2-byte void; a 1-byte void is any of
  // its 8-, 6- and 4-bit types, so its codes are the asked format's.
  if (kind == "V2") return Storage{false, &kBFloat16, 2};
  if (kind == "u1" || kind == "V1" || kind == "u2") return Storage{false, nullptr, kind == "u2" ? 2 : 1};
  return std::nullopt;
}

// The dtypes that hold values of `format`, for errors.
std::string AcceptedDtypes(const FloatFormat& format) {
  std::string text = "float32 or float64";
  if (format.bits >= 32) return text;
  const std::string float_descr = NumpyFloatDescr(format);
  if (!float_descr.empty()) text += ", float16";
  text += fmt::format(", uint{} bit patterns", 8 * format.storage_bytes());
  if (float_descr.empty()) {
    text += format.storage_bytes() == 2 ? " or ml_dtypes' bfloat16"
                                        : fmt::format(" or ml_dtypes' {} (a 1-byte void)", format.name);
  }
  return text;
}

}  // namespace

const FloatFormat* NumpyFormat(const NumpyArray& array) {
  const std::string kind = array.dtype.substr(1);
  if (kind == "f2") return &kBinary16;
  if (kind == "V2") return &kBFloat16;
  if (array.dtype == "<f1") return &kFloat8E5M2;
  // A registered format's name as the type string says which it is; a
  // 1-byte void ("|V1") does not: every ml_dtypes 8-, 6- and 4-bit type
  // saves as it.
  const FloatFormat* named = FindFormat(array.dtype);
  return named != nullptr && named->bits <= 16 ? named : nullptr;
}

std::vector<float> ArrayValues(const NumpyArray& array, const FloatFormat& format,
                               const std::string& where) {
  const std::string kind = array.dtype.substr(1);  // "f4", "u2", ...
  const std::optional<Storage> storage = StorageOf(array.dtype);
  if (format.bits >= 32 && storage && !storage->values) {
    const FloatFormat* held = storage->codes_of;
    throw InputError(fmt::format(
        "{}: dtype '{}' holds {}-bit values, read here as {}: pass --dtype {}", where, array.dtype,
        8 * storage->bytes, format.name,
        held != nullptr                 ? std::string(held->name)
        : kind == "u2"                  ? std::string("bf16 or --dtype f16 (bit patterns)")
                                        : std::string("FORMAT (the 8-, 6- or 4-bit format of the codes)")));
  }
  if (!storage ||
      (storage->codes_of == nullptr && !storage->values && storage->bytes != format.storage_bytes()) ||
      (storage->codes_of != nullptr && !SameEncoding(*storage->codes_of, format) &&
       storage->codes_of->bits >= format.bits)) {
    throw InputError(fmt::format("{}: dtype '{}' cannot hold {} values here ({})", where, array.dtype,
                                 format.name, AcceptedDtypes(format)));
  }
  const FloatFormat& codes = storage->codes_of != nullptr ? *storage->codes_of : format;
  const uint64_t code_mask = codes.bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << codes.bits) - 1;
  const size_t n = array.size();
  std::vector<float> values(n);
  for (size_t i = 0; i < n; ++i) {
    const uint8_t* p = array.data.data() + i * static_cast<size_t>(storage->bytes);
    double v = 0;
    if (kind == "f4") {
      float f;
      std::memcpy(&f, p, 4);
      v = f;
    } else if (kind == "f8") {
      std::memcpy(&v, p, 8);
    } else {
      uint64_t b = 0;
      for (int k = 0; k < storage->bytes; ++k) b |= uint64_t{p[k]} << (8 * k);
      if ((b & ~code_mask) != 0) {
        throw InputError(fmt::format("{}: element {} = {:#x} is not a {}-bit {} code (first of the array)",
                                     where, i, b, codes.bits, codes.name));
      }
      v = DecodeBits(codes, b);
    }
    if (!IsRepresentable(format, v)) {
      throw InputError(fmt::format("{}: element {} = {} is not a {} value (first of the array)",
                                   where, i, fmt::format("{:a}", v), format.name));
    }
    values[i] = static_cast<float>(v);
  }
  return values;
}

// Writes .npy images as one .npy (a single image) or an .npz archive, after
// the path's extension, through a temporary file renamed into place.
static void WriteImages(const std::string& path, const std::vector<std::string>& names,
                 const std::vector<std::string>& images) {
  const bool npz = EndsWith(path, ".npz");
  const std::string temporary = path + ".tmp";
  if (!npz) {
    std::ofstream out(temporary, std::ios::binary);
    out.write(images[0].data(), static_cast<std::streamsize>(images[0].size()));
    if (!out.flush()) throw InputError(path + ": write failed");
  } else {
    std::remove(temporary.c_str());
    int error = 0;
    zip_t* archive = zip_open(temporary.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &error);
    if (!archive) throw InputError(path + ": cannot create the archive");
    for (size_t k = 0; k < images.size(); ++k) {
      zip_source_t* source = zip_source_buffer(archive, images[k].data(), images[k].size(), 0);
      if (source == nullptr ||
          zip_file_add(archive, (names[k] + ".npy").c_str(), source, ZIP_FL_ENC_UTF_8) < 0) {
        if (source) zip_source_free(source);
        const std::string why = zip_strerror(archive);
        zip_discard(archive);
        throw InputError(path + ": cannot add " + names[k] + ": " + why);
      }
    }
    if (zip_close(archive) != 0) {
      const std::string why = zip_strerror(archive);
      zip_discard(archive);
      throw InputError(path + ": write failed: " + why);
    }
  }
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);
  if (ec) throw InputError(path + ": " + ec.message());
}

void WriteNumpyFile(const std::string& path, const std::vector<NumpyOutput>& arrays) {
  const bool npz = EndsWith(path, ".npz");
  if (!npz && !EndsWith(path, ".npy")) throw InputError(path + ": expected a .npy or .npz path");
  if (!npz && arrays.size() != 1) {
    throw InputError(fmt::format("{}: {} arrays do not fit in one .npy; write an .npz", path,
                                 arrays.size()));
  }
  std::vector<std::string> images;
  for (const NumpyOutput& a : arrays) {
    if (a.format == nullptr || a.format->bits >= 32) {
      images.push_back(xt::dump_npy(xt::adapt(a.values, a.shape)));
      continue;
    }
    // A narrower format as its own dtype: float16 for f16; for the formats
    // NumPy has no type for, the void ml_dtypes' types save as (2 bytes for
    // bfloat16, 1 for each 8-, 6- and 4-bit type, one element a byte).
    // xtensor writes the codes as unsigned integers and the type string is
    // replaced in place (the same length, so the header's padding holds).
    std::vector<uint64_t> codes(a.values.size());
    for (size_t i = 0; i < codes.size(); ++i) {
      if (!IsRepresentable(*a.format, a.values[i])) {
        throw InputError(fmt::format("{}: {}[{}] = {:a} is not a {} value", path, a.name, i,
                                     a.values[i], a.format->name));
      }
      codes[i] = EncodeBits(*a.format, a.values[i]);
    }
    const std::string float_descr = NumpyFloatDescr(*a.format);
    std::string image, stand_in, descr;
    if (a.format->storage_bytes() == 2) {
      // A 2-byte void is read back as bfloat16; another 16-bit format
      // without a NumPy type stays uint16 codes.
      image = xt::dump_npy(xt::adapt(std::vector<uint16_t>(codes.begin(), codes.end()), a.shape));
      stand_in = "'<u2'";
      descr = !float_descr.empty()                    ? "'" + float_descr + "'"
              : SameEncoding(*a.format, kBFloat16) ? std::string("'<V2'")
                                                       : stand_in;
    } else if (a.format->storage_bytes() == 1) {
      image = xt::dump_npy(xt::adapt(std::vector<uint8_t>(codes.begin(), codes.end()), a.shape));
      stand_in = image.find("'|u1'") != std::string::npos ? "'|u1'" : "'<u1'";
      descr = "'<V1'";  // as ml_dtypes' arrays save
    } else {
      throw InputError(fmt::format("{}: {} has no .npy type here", path, a.format->name));
    }
    const size_t at = image.find(stand_in);
    if (at == std::string::npos) {
      throw InputError(path + ": unexpected .npy header for " + a.name);
    }
    image.replace(at, stand_in.size(), descr);
    images.push_back(std::move(image));
  }
  std::vector<std::string> names;
  for (const NumpyOutput& a : arrays) names.push_back(a.name);
  WriteImages(path, names, images);
}

std::string NumpyDtypeText(const FloatFormat* format) {
  if (format == nullptr || format->bits >= 32) return "float32";
  if (!NumpyFloatDescr(*format).empty()) return "float16";
  if (format->storage_bytes() == 1) return fmt::format("1-byte void (ml_dtypes' {})", format->name);
  return SameEncoding(*format, kBFloat16) ? "bfloat16 (2-byte void)" : "uint16 codes";
}

void WriteNumpyArrays(const std::string& path, const std::vector<NumpyArray>& arrays) {
  std::vector<std::string> images, names;
  for (const NumpyArray& a : arrays) {
    // The header as NumPy writes it: the dictionary, padded with spaces and
    // ended by a newline so that the data starts at a multiple of 64 bytes.
    std::string shape = fmt::format("{}", fmt::join(a.shape, ", "));
    if (a.shape.size() == 1) shape += ",";
    std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}",
                                     a.dtype, shape);
    const size_t total = 10 + header.size() + 1;
    header.append((64 - total % 64) % 64, ' ');
    header += '\n';
    std::string image = "\x93NUMPY";
    image += '\x01';
    image += '\x00';
    image += static_cast<char>(header.size() & 0xff);
    image += static_cast<char>(header.size() >> 8);
    image += header;
    image.append(a.data.begin(), a.data.end());
    images.push_back(std::move(image));
    names.push_back(a.name);
  }
  WriteImages(path, names, images);
}

}  // namespace ulpgate
