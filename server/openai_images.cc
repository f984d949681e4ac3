#include "server/openai_images.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/cord.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/base/status_macros.h"
#include "core/base/utf8.h"
#include "core/config/field_error.h"
#include "core/config/freeze.h"
#include "nlohmann/json.hpp"
#include "server/mime_types.h"
#include "server/status_conversion.h"

namespace ditserve::server {
namespace {

using Json = nlohmann::json;

// Where a parse error keeps the field it names, for the error body's param.
constexpr char kParamPayloadUrl[] = "type.ditserve.dev/openai-param";

const std::vector<std::string>& AllowedFields() {
  static const auto* fields =
      new std::vector<std::string>{"model",
                                   "prompt",
                                   "n",
                                   "size",
                                   "response_format",
                                   "user",
                                   "output_format",
                                   "output_compression",
                                   "quality",
                                   "style",
                                   "background",
                                   "moderation",
                                   "negative_prompt",
                                   "num_inference_steps",
                                   "guidance_scale",
                                   "seed",
                                   "max_sequence_length",
                                   "num_frames",
                                   "fps",
                                   "use_dynamic_cfg",
                                   "use_resolution_binning",
                                   "vae_tiling",
                                   "request_id",
                                   "priority",
                                   "stream",
                                   "partial_images"};
  return *fields;
}

// The parameter that holds a GenerateRequest field: "size" holds height and
// width, output_compression is the quality; the other fields this API takes
// have their GenerateRequest names.
std::string ParamFor(absl::string_view field) {
  if (field == "height" || field == "width") return "size";
  if (field == "output_quality") return "output_compression";
  return std::string(field);
}

absl::Status FieldError(absl::string_view field, absl::string_view problem) {
  absl::Status status =
      absl::InvalidArgumentError(absl::StrCat(field, ": ", problem));
  status.SetPayload(kParamPayloadUrl, absl::Cord(field));
  return status;
}

// The JSON text of `value`. Its strings may hold client bytes that are not
// UTF-8 (a URL path quoted in an error, a value cut short below), which
// nlohmann::json's dump() would throw on; they are written as U+FFFD.
std::string JsonText(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// A value as the client wrote it, cut short for an error message.
std::string Shown(const Json& value) {
  return base::Shortened(JsonText(value));
}

absl::StatusOr<std::string> ReadString(const Json& body,
                                       absl::string_view field) {
  const Json& value = body.at(std::string(field));
  if (!value.is_string()) {
    return FieldError(field,
                      absl::StrCat("must be a string, got ", Shown(value)));
  }
  return value.get<std::string>();
}

absl::StatusOr<int32_t> ReadInt32(const Json& body, absl::string_view field) {
  const Json& value = body.at(std::string(field));
  if (value.is_number_unsigned() &&
      value.get<uint64_t>() <= std::numeric_limits<int32_t>::max()) {
    return static_cast<int32_t>(value.get<uint64_t>());
  }
  if (value.is_number_integer() && !value.is_number_unsigned() &&
      value.get<int64_t>() >= std::numeric_limits<int32_t>::min()) {
    return static_cast<int32_t>(value.get<int64_t>());
  }
  return FieldError(
      field, absl::StrCat("must be a 32-bit integer, got ", Shown(value)));
}

absl::StatusOr<bool> ReadBool(const Json& body, absl::string_view field) {
  const Json& value = body.at(std::string(field));
  if (!value.is_boolean()) {
    return FieldError(
        field, absl::StrCat("must be true or false, got ", Shown(value)));
  }
  return value.get<bool>();
}

absl::StatusOr<float> ReadNumber(const Json& body, absl::string_view field) {
  const Json& value = body.at(std::string(field));
  if (!value.is_number()) {
    return FieldError(field,
                      absl::StrCat("must be a number, got ", Shown(value)));
  }
  // Narrowing a double past float's range is undefined behaviour.
  const double number = value.get<double>();
  if (!(std::abs(number) <= std::numeric_limits<float>::max())) {
    return FieldError(
        field, absl::StrCat("must fit a 32-bit float, got ", Shown(value)));
  }
  return static_cast<float>(number);
}

// A JSON number, or a decimal string since JavaScript numbers lose seeds
// above 2^53.
absl::StatusOr<uint64_t> ReadSeed(const Json& body) {
  const Json& value = body.at("seed");
  uint64_t seed = 0;
  if (value.is_number_unsigned()) return value.get<uint64_t>();
  if (value.is_string() && absl::SimpleAtoi(value.get<std::string>(), &seed)) {
    return seed;
  }
  return FieldError("seed",
                    absl::StrCat("must be an integer from 0 to 2^64 - 1 (a "
                                 "number or a decimal string), got ",
                                 Shown(value)));
}

// "WxH" as OpenAI writes it (width first), or "auto" for the model's default.
absl::Status ReadSize(const Json& body, v1::GenerateRequest& request) {
  ASSIGN_OR_RETURN(const std::string size, ReadString(body, "size"));
  if (size == "auto") return absl::OkStatus();
  const std::vector<std::string> sides = absl::StrSplit(size, 'x');
  int32_t width = 0;
  int32_t height = 0;
  if (sides.size() != 2 || !absl::SimpleAtoi(sides[0], &width) ||
      !absl::SimpleAtoi(sides[1], &height) || width <= 0 || height <= 0) {
    return FieldError("size", absl::StrCat("\"", base::Shortened(size),
                                           "\" is not \"WIDTHxHEIGHT\" in "
                                           "pixels (e.g. \"1024x768\") or "
                                           "\"auto\""));
  }
  request.set_width(width);
  request.set_height(height);
  return absl::OkStatus();
}

// An OpenAI field for something ditserve does not (or only one way) do,
// taken where its value asks for what the server does anyway (`accepted`:
// OpenAI's defaults, which must mean what leaving the field out means, and
// values true of every response here). Clients send defaults explicitly:
// LangChain.js's DALL-E wrapper sends "quality": "standard" and "style":
// "vivid" with every request. Any other value is refused, with `why`.
absl::Status ReadServersChoice(const Json& body, absl::string_view field,
                               const std::vector<std::string>& accepted,
                               absl::string_view why) {
  if (!body.contains(std::string(field))) return absl::OkStatus();
  ASSIGN_OR_RETURN(const std::string value, ReadString(body, field));
  if (std::find(accepted.begin(), accepted.end(), value) != accepted.end()) {
    return absl::OkStatus();
  }
  return FieldError(
      field, absl::StrCat("\"", base::Shortened(value),
                          "\" is not offered; allowed: \"",
                          absl::StrJoin(accepted, "\", \""), "\" (", why, ")"));
}

absl::Status ReadFormats(const Json& body, v1::GenerateRequest& request) {
  RETURN_IF_ERROR(ReadServersChoice(body, "response_format", {"b64_json"},
                                    "the server keeps no images to link to"));
  if (body.contains("output_format")) {
    ASSIGN_OR_RETURN(const std::string format,
                     ReadString(body, "output_format"));
    if (format == "png") {
      request.set_output_format(v1::OUTPUT_FORMAT_PNG);
    } else if (format == "jpeg") {
      request.set_output_format(v1::OUTPUT_FORMAT_JPEG);
    } else if (format == "webp") {
      request.set_output_format(v1::OUTPUT_FORMAT_WEBP);
    } else if (format == "mp4") {
      request.set_output_format(v1::OUTPUT_FORMAT_MP4);
    } else {
      return FieldError(
          "output_format",
          absl::StrCat("\"", base::Shortened(format),
                       "\" is not supported; allowed: \"png\", \"jpeg\", "
                       "\"webp\", \"mp4\" (video models)"));
    }
  }
  if (body.contains("output_compression")) {
    // OpenAI's name for the quality of its lossy formats (100: best).
    ASSIGN_OR_RETURN(const int32_t quality,
                     ReadInt32(body, "output_compression"));
    if (!config::TakesOutputQuality(request.output_format())) {
      return FieldError("output_compression",
                        "only with output_format \"jpeg\" or \"webp\"");
    }
    if (quality < config::kMinOutputQuality ||
        quality > config::kMaxOutputQuality) {
      return FieldError(
          "output_compression",
          absl::StrCat("allowed ", config::kMinOutputQuality, " to ",
                       config::kMaxOutputQuality, " (the quality, ",
                       config::kMaxOutputQuality, " best), got ", quality));
    }
    request.set_output_quality(quality);
  }
  return absl::OkStatus();
}

// The GenerateRequest fields that keep their names over HTTP.
absl::Status ReadDitserveFields(const Json& body,
                                v1::GenerateRequest& request) {
  const auto has = [&body](const char* field) { return body.contains(field); };
  if (has("num_inference_steps")) {
    ASSIGN_OR_RETURN(const int32_t steps,
                     ReadInt32(body, "num_inference_steps"));
    request.set_num_inference_steps(steps);
  }
  if (has("guidance_scale")) {
    ASSIGN_OR_RETURN(const float scale, ReadNumber(body, "guidance_scale"));
    request.set_guidance_scale(scale);
  }
  if (has("seed")) {
    ASSIGN_OR_RETURN(const uint64_t seed, ReadSeed(body));
    request.set_seed(seed);
  }
  if (has("max_sequence_length")) {
    ASSIGN_OR_RETURN(const int32_t length,
                     ReadInt32(body, "max_sequence_length"));
    request.set_max_sequence_length(length);
  }
  if (has("num_frames")) {
    ASSIGN_OR_RETURN(const int32_t frames, ReadInt32(body, "num_frames"));
    request.set_num_frames(frames);
  }
  if (has("fps")) {
    ASSIGN_OR_RETURN(const int32_t fps, ReadInt32(body, "fps"));
    request.set_fps(fps);
  }
  if (has("use_dynamic_cfg")) {
    ASSIGN_OR_RETURN(const bool dynamic, ReadBool(body, "use_dynamic_cfg"));
    request.set_use_dynamic_cfg(dynamic);
  }
  if (has("use_resolution_binning")) {
    ASSIGN_OR_RETURN(const bool binning,
                     ReadBool(body, "use_resolution_binning"));
    request.set_use_resolution_binning(binning);
  }
  if (has("vae_tiling")) {
    ASSIGN_OR_RETURN(const bool tiling, ReadBool(body, "vae_tiling"));
    request.set_vae_tiling(tiling);
  }
  if (has("priority")) {
    ASSIGN_OR_RETURN(const int32_t priority, ReadInt32(body, "priority"));
    request.set_priority(priority);
  }
  if (has("request_id")) {
    ASSIGN_OR_RETURN(*request.mutable_request_id(),
                     ReadString(body, "request_id"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Json> ParseObject(absl::string_view text) {
  // Every field is a string, number or boolean, so one level of nesting
  // below them is enough to quote a wrong value. The parser keeps no
  // deeper values: dump() recurses once per level, and a body of a few
  // hundred thousand brackets would overflow the handler thread's stack.
  constexpr int kMaxNesting = 2;
  bool too_deep = false;
  // The parser keeps a repeated key's last value; a proxy that checked the
  // first would have let through what it did not check.
  absl::flat_hash_set<std::string> fields;
  std::optional<std::string> repeated;
  Json body = Json::parse(
      text,
      [&](int depth, Json::parse_event_t event, Json& parsed) {
        const bool opens = event == Json::parse_event_t::object_start ||
                           event == Json::parse_event_t::array_start;
        if (opens && depth >= kMaxNesting) {
          too_deep = true;
          return false;
        }
        // Depth 1 holds the keys of the top-level object, and only those.
        if (event == Json::parse_event_t::key && depth == 1 &&
            !fields.insert(parsed.get<std::string>()).second) {
          repeated = parsed.get<std::string>();
          return false;
        }
        return true;
      },
      /*allow_exceptions=*/false);
  if (body.is_discarded()) {
    return absl::InvalidArgumentError(
        "request body is not JSON; send a JSON object with at least "
        "\"prompt\"");
  }
  if (too_deep) {
    return absl::InvalidArgumentError(absl::StrCat(
        "request body nests arrays or objects more than ", kMaxNesting,
        " levels deep; its fields take strings, numbers and booleans"));
  }
  if (repeated.has_value()) {
    return FieldError(base::Shortened(*repeated),
                      "given more than once; send each field once");
  }
  if (!body.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat("request body must be a JSON object, got ", Shown(body)));
  }
  const std::vector<std::string>& allowed = AllowedFields();
  for (const auto& [field, value] : body.items()) {
    if (std::find(allowed.begin(), allowed.end(), field) == allowed.end()) {
      return FieldError(base::Shortened(field),
                        absl::StrCat("unknown field; allowed: ",
                                     absl::StrJoin(allowed, ", ")));
    }
  }
  // OpenAI's API takes null for an optional field as leaving it out, and
  // clients generated from its schema (Java, Kotlin, C#) send a null for
  // every field they were not given.
  for (auto member = body.begin(); member != body.end();) {
    member = member->is_null() ? body.erase(member) : std::next(member);
  }
  return body;
}

std::string OutputFormatName(absl::string_view mime_type) {
  if (mime_type == kMp4MimeType) return "mp4";
  if (mime_type == kPngMimeType) return "png";
  if (mime_type == kJpegMimeType) return "jpeg";
  if (mime_type == kWebpMimeType) return "webp";
  return std::string(mime_type);
}

}  // namespace

absl::StatusOr<ImagesRequest> ParseImagesRequest(absl::string_view body_text,
                                                 int max_batch) {
  ASSIGN_OR_RETURN(const Json body, ParseObject(body_text));
  ImagesRequest parsed;
  v1::GenerateRequest& request = parsed.request;
  if (!body.contains("prompt")) {
    return FieldError("prompt", "required: the text to generate from");
  }
  ASSIGN_OR_RETURN(const std::string prompt, ReadString(body, "prompt"));
  int32_t n = 1;
  if (body.contains("n")) {
    ASSIGN_OR_RETURN(n, ReadInt32(body, "n"));
    if (n < 1 || n > max_batch) {
      return FieldError("n",
                        absl::StrCat(n, " images; allowed 1 to ", max_batch));
    }
  }
  std::optional<std::string> negative_prompt;
  if (body.contains("negative_prompt")) {
    ASSIGN_OR_RETURN(negative_prompt, ReadString(body, "negative_prompt"));
  }
  for (int i = 0; i < n; ++i) {
    request.add_prompt(prompt);
    if (negative_prompt.has_value())
      request.add_negative_prompt(*negative_prompt);
  }
  if (body.contains("model")) {
    ASSIGN_OR_RETURN(*request.mutable_model(), ReadString(body, "model"));
  }
  if (body.contains("user")) {
    ASSIGN_OR_RETURN(parsed.user, ReadString(body, "user"));
  }
  if (body.contains("stream")) {
    ASSIGN_OR_RETURN(parsed.stream, ReadBool(body, "stream"));
  }
  if (body.contains("partial_images")) {
    ASSIGN_OR_RETURN(const int32_t partial, ReadInt32(body, "partial_images"));
    if (partial != 0 && !parsed.stream) {
      return FieldError("partial_images",
                        absl::StrCat(partial,
                                     "; partial images are streamed: set "
                                     "\"stream\": true, or leave it 0"));
    }
    request.set_partial_images(partial);
  }
  if (body.contains("size")) RETURN_IF_ERROR(ReadSize(body, request));
  RETURN_IF_ERROR(ReadFormats(body, request));
  RETURN_IF_ERROR(ReadServersChoice(
      body, "quality", {"auto", "standard"},
      "the model's quality follows num_inference_steps and guidance_scale"));
  RETURN_IF_ERROR(ReadServersChoice(
      body, "style", {"vivid"},
      "DALL-E 3's default; ditserve generates from the prompt as given"));
  RETURN_IF_ERROR(ReadServersChoice(body, "background", {"auto", "opaque"},
                                    "the images have no alpha channel"));
  RETURN_IF_ERROR(ReadServersChoice(body, "moderation", {"auto", "low"},
                                    "ditserve moderates no content"));
  RETURN_IF_ERROR(ReadDitserveFields(body, request));
  return parsed;
}

std::string ImagesResponseBody(const v1::GenerateResponse& response,
                               absl::Time created) {
  Json data = Json::array();
  for (const v1::Image& image : response.images()) {
    data.push_back({{"b64_json", absl::Base64Escape(image.data())}});
  }
  const v1::InputConfig& config = response.config();
  Json body = {
      {"created", absl::ToUnixSeconds(created)},
      {"data", std::move(data)},
      {"size", absl::StrCat(config.width(), "x", config.height())},
      {"request_id", config.request_id()},
  };
  if (response.images_size() > 0) {
    body["output_format"] = OutputFormatName(response.images(0).mime_type());
  }
  if (config.seeds_size() > 0) {
    body["seed"] = absl::StrCat(config.seeds(0));
  }
  return JsonText(body);
}

namespace {

Json ErrorJson(const absl::Status& status) {
  Json error = {
      {"message", std::string(status.message())},
      {"type", HttpStatusFor(status.code()) < 500 ? "invalid_request_error"
                                                  : "server_error"},
      {"param", nullptr},
      {"code", StatusLabel(status.code())}};
  if (absl::optional<absl::Cord> param = status.GetPayload(kParamPayloadUrl)) {
    error["param"] = std::string(*param);
  } else if (const std::vector<std::string> fields =
                 config::ErrorFields(status);
             !fields.empty()) {
    error["param"] = ParamFor(fields.front());
  }
  return Json{{"error", std::move(error)}};
}

std::string Event(absl::string_view type, const Json& data) {
  return absl::StrCat("event: ", type, "\ndata: ", JsonText(data), "\n\n");
}

}  // namespace

std::string ErrorBody(const absl::Status& status) {
  return JsonText(ErrorJson(status));
}

std::string ProgressEvent(
    const v1::GenerateStreamResponse::Progress& progress) {
  constexpr char kType[] = "ditserve.progress";
  return Event(kType, {{"type", kType},
                       {"step", progress.step()},
                       {"total_steps", progress.total_steps()},
                       {"elapsed_seconds", progress.elapsed_seconds()}});
}

std::string PartialImageEvent(
    const v1::GenerateStreamResponse::PartialImage& partial,
    absl::Time created) {
  constexpr char kType[] = "image_generation.partial_image";
  const v1::Image& image = partial.image();
  return Event(kType,
               {{"type", kType},
                {"b64_json", absl::Base64Escape(image.data())},
                {"created_at", absl::ToUnixSeconds(created)},
                {"size", absl::StrCat(image.width(), "x", image.height())},
                {"output_format", OutputFormatName(image.mime_type())},
                {"partial_image_index", partial.partial_image_index()},
                {"index", image.prompt_index()},
                {"step", partial.step()}});
}

std::vector<std::string> CompletedEvents(const v1::GenerateResponse& response,
                                         absl::Time created) {
  constexpr char kType[] = "image_generation.completed";
  const v1::InputConfig& config = response.config();
  std::vector<std::string> events;
  for (int i = 0; i < response.images_size(); ++i) {
    const v1::Image& image = response.images(i);
    Json data = {{"type", kType},
                 {"b64_json", absl::Base64Escape(image.data())},
                 {"created_at", absl::ToUnixSeconds(created)},
                 {"size", absl::StrCat(config.width(), "x", config.height())},
                 {"output_format", OutputFormatName(image.mime_type())},
                 {"index", i},
                 {"request_id", config.request_id()}};
    if (image.prompt_index() < config.seeds_size()) {
      data["seed"] = absl::StrCat(config.seeds(image.prompt_index()));
    }
    events.push_back(Event(kType, data));
  }
  return events;
}

std::string ErrorEvent(const absl::Status& status) {
  return Event("error", ErrorJson(status));
}

}  // namespace ditserve::server
