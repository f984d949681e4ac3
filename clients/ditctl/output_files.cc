#include "clients/ditctl/output_files.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <system_error>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace ditserve::ditctl {
namespace {

// The format a file name's extension names, in any case.
std::optional<v1::OutputFormat> FormatOfPath(const std::string& path) {
  for (const auto& [extension, format] :
       {std::pair<const char*, v1::OutputFormat>{".png", v1::OUTPUT_FORMAT_PNG},
        {".jpg", v1::OUTPUT_FORMAT_JPEG},
        {".jpeg", v1::OUTPUT_FORMAT_JPEG},
        {".webp", v1::OUTPUT_FORMAT_WEBP},
        {".mp4", v1::OUTPUT_FORMAT_MP4}}) {
    if (absl::EndsWithIgnoreCase(path, extension)) return format;
  }
  return std::nullopt;
}

}  // namespace

absl::StatusOr<v1::OutputFormat> ParseOutputFormat(const std::string& name,
                                                   const std::string& path) {
  const std::optional<v1::OutputFormat> named_by_path = FormatOfPath(path);
  if (name.empty()) return named_by_path.value_or(v1::OUTPUT_FORMAT_PNG);
  for (const auto& [known, format] :
       {std::pair<const char*, v1::OutputFormat>{"png", v1::OUTPUT_FORMAT_PNG},
        {"jpeg", v1::OUTPUT_FORMAT_JPEG},
        {"webp", v1::OUTPUT_FORMAT_WEBP},
        {"mp4", v1::OUTPUT_FORMAT_MP4},
        {"rgb8", v1::OUTPUT_FORMAT_RGB8},
        {"latent", v1::OUTPUT_FORMAT_LATENT_F32}}) {
    if (absl::AsciiStrToLower(name) != known) continue;
    if (named_by_path.has_value() && *named_by_path != format) {
      return absl::InvalidArgumentError(
          absl::StrCat("-o ", path, " names another format than --format ",
                       name, "; give -o a name for ", name,
                       " data, or drop "
                       "--format to take the extension's"));
    }
    return format;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("--format ", name,
                   " is unknown; use png, jpeg, webp, rgb8, latent or mp4"));
}

std::string DefaultOutputPath(v1::OutputFormat format) {
  switch (format) {
    case v1::OUTPUT_FORMAT_JPEG:
      return "out.jpg";
    case v1::OUTPUT_FORMAT_WEBP:
      return "out.webp";
    case v1::OUTPUT_FORMAT_MP4:
      return "out.mp4";
    case v1::OUTPUT_FORMAT_RGB8:
      return "out.rgb";
    case v1::OUTPUT_FORMAT_LATENT_F32:
      return "out.f32";
    default:
      return "out.png";
  }
}

absl::Status CheckOutputPath(const std::string& path) {
  const auto refused = [&path](const std::string& why) {
    return absl::InvalidArgumentError(absl::StrCat("-o ", path, ": ", why));
  };
  std::error_code ignored;
  const std::filesystem::file_status existing =
      std::filesystem::status(path, ignored);
  if (std::filesystem::is_directory(existing)) {
    return refused("is a folder; name a file in it");
  }
  if (std::filesystem::exists(existing) &&
      !std::filesystem::is_regular_file(existing)) {
    if (::access(path.c_str(), W_OK) == 0) return absl::OkStatus();
    return refused(
        absl::StrCat("cannot be written to (", std::strerror(errno), ")"));
  }
  std::filesystem::path folder = std::filesystem::path(path).parent_path();
  if (folder.empty()) folder = ".";
  if (!std::filesystem::is_directory(folder, ignored)) {
    return refused(
        absl::StrCat("its folder ", folder.string(), " does not exist"));
  }
  // Outputs are written beside their final name first (`path`.part).
  if (::access(folder.c_str(), W_OK) != 0) {
    return refused(absl::StrCat("its folder ", folder.string(),
                                " cannot be written to (", std::strerror(errno),
                                ")"));
  }
  return absl::OkStatus();
}

absl::Status WriteOutputFile(const std::string& path, absl::string_view data) {
  // Why the last write failed, as the system said.
  std::string reason;
  const auto write = [&data, &reason](const std::string& to) {
    std::ofstream out(to, std::ios::binary);
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    out.close();
    if (!out) reason = absl::StrCat(": ", std::strerror(errno));
    return static_cast<bool>(out);
  };
  const auto cannot = [&path](const std::string& why) {
    return absl::UnavailableError(absl::StrCat("cannot write ", path, why));
  };
  std::error_code ignored;
  const std::filesystem::file_status existing =
      std::filesystem::symlink_status(path, ignored);
  // A link, device or FIFO (-o /dev/stdout) is written through, as before:
  // renaming over it would replace it.
  if (std::filesystem::exists(existing) &&
      !std::filesystem::is_regular_file(existing)) {
    return write(path) ? absl::OkStatus() : cannot(reason);
  }
  const std::string partial = absl::StrCat(path, ".part");
  std::error_code renamed;
  if (write(partial)) {
    std::filesystem::rename(partial, path, renamed);
    if (!renamed) return absl::OkStatus();
  }
  std::filesystem::remove(partial, ignored);
  return cannot(renamed ? absl::StrCat(": ", renamed.message()) : reason);
}

}  // namespace ditserve::ditctl
