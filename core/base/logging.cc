#include "core/base/logging.h"

#include <chrono>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "spdlog/formatter.h"
#include "spdlog/sinks/stdout_sinks.h"
#include "spdlog/spdlog.h"

namespace ditserve::base {
namespace {

void AppendJsonString(absl::string_view text, std::string& out) {
  out.push_back('"');
  for (const char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += absl::StrFormat("\\u%04x", c);
        } else {
          out.push_back(c);
        }
    }
  }
  out.push_back('"');
}

class JsonFormatter : public spdlog::formatter {
 public:
  explicit JsonFormatter(int rank) : rank_(rank) {}

  void format(const spdlog::details::log_msg& msg,
              spdlog::memory_buf_t& dest) override {
    std::string line = "{\"time\":";
    AppendJsonString(
        absl::FormatTime(absl::RFC3339_full, absl::FromChrono(msg.time),
                         absl::UTCTimeZone()),
        line);
    line += ",\"level\":";
    const auto level = spdlog::level::to_string_view(msg.level);
    AppendJsonString(absl::string_view(level.data(), level.size()), line);
    absl::StrAppend(&line, ",\"rank\":", rank_, ",\"msg\":");
    AppendJsonString(absl::string_view(msg.payload.data(), msg.payload.size()),
                     line);
    line += "}\n";
    dest.append(line.data(), line.data() + line.size());
  }

  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<JsonFormatter>(rank_);
  }

 private:
  const int rank_;
};

}  // namespace

absl::Status ConfigureLogging(int rank, const std::string& format) {
  auto logger = spdlog::stderr_logger_mt(absl::StrCat("rank", rank));
  if (format == "json") {
    logger->set_formatter(std::make_unique<JsonFormatter>(rank));
  } else if (format == "text") {
    logger->set_pattern(
        absl::StrCat("[%Y-%m-%d %H:%M:%S.%e] [%l] rank=", rank, " %v"));
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("--log_format ", format, " is unknown; use text or json"));
  }
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
  return absl::OkStatus();
}

}  // namespace ditserve::base
