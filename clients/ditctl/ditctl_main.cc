// ditctl: command-line client of a ditserve host.
//
//   ditctl generate "a red fox in snow" [-W 512 -H 512 --steps 8 --seed 1
//                   -o fox.png]
//   ditctl generate "waves at dusk" --frames 49 --fps 8 -o waves.mp4
//   ditctl generate "a lighthouse" -o lighthouse.jpg --quality 85
//   ditctl info
//   ditctl health
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "absl/types/optional.h"
#include "clients/ditctl/append_slice.h"
#include "clients/ditctl/chunked_outputs.h"
#include "clients/ditctl/connection_flags.h"
#include "clients/ditctl/error_messages.h"
#include "clients/ditctl/output_files.h"
#include "clients/ditctl/progress_bar.h"
#include "ditserve/v1/generation.grpc.pb.h"
#include "google/protobuf/util/json_util.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/grpcpp.h"

ABSL_FLAG(std::string, server, "localhost:50051", "host:port of ditserve-host");
ABSL_FLAG(double, timeout, 600, "seconds before the call is abandoned");
ABSL_FLAG(double, keepalive, 360,
          "seconds without a message from the server, while a call waits, "
          "before ditctl pings it (0: never; else at least 10); a ping not "
          "answered within --keepalive_timeout fails the call UNAVAILABLE "
          "before --timeout, when the host died or the network went dark. The "
          "default suits a proxy left at gRPC's defaults, which closes a "
          "connection pinged more often than every 5 minutes");
ABSL_FLAG(double, keepalive_timeout, 20,
          "seconds a keepalive ping may go unanswered");
ABSL_FLAG(absl::optional<int>, W, absl::nullopt, "image width in pixels");
ABSL_FLAG(absl::optional<int>, H, absl::nullopt, "image height in pixels");
ABSL_FLAG(absl::optional<int>, steps, absl::nullopt, "denoising steps");
ABSL_FLAG(absl::optional<uint64_t>, seed, absl::nullopt,
          "seed of the first image (image i uses seed + i)");
ABSL_FLAG(absl::optional<float>, guidance, absl::nullopt, "guidance scale");
ABSL_FLAG(absl::optional<int>, max_sequence_length, absl::nullopt,
          "text encoder sequence length");
ABSL_FLAG(std::string, negative, "",
          "negative prompt for every prompt (commas are part of it)");
ABSL_FLAG(absl::optional<int>, frames, absl::nullopt,
          "frames of a video (video models)");
ABSL_FLAG(absl::optional<int>, fps, absl::nullopt,
          "frames per second of a video (video models)");
ABSL_FLAG(bool, dynamic_cfg, false,
          "guidance that follows the step (diffusers' use_dynamic_cfg; "
          "CogVideoX)");
ABSL_FLAG(bool, vae_tiling, false,
          "decode outputs larger than one VAE tile in tiles (diffusers' "
          "enable_tiling; less memory, seams blended)");
ABSL_FLAG(std::string, format, "",
          "png, jpeg, webp, rgb8, latent or mp4 (video models); default from "
          "-o's extension in any case (.mp4, .jpg or .jpeg, .webp), else png");
ABSL_FLAG(absl::optional<int>, quality, absl::nullopt,
          "JPEG or WebP quality, 1 to 100 (default: the server's)");
ABSL_FLAG(std::string, o, "",
          "output file (default out.png, out.jpg, out.webp, out.mp4, out.rgb "
          "or out.f32 by format); with several prompts, -0, -1, ... is added "
          "before the extension, and each PNG or JPEG frame of a video gets "
          "-fNNN");
ABSL_FLAG(bool, validate_only, false,
          "print the frozen config without generating");
ABSL_FLAG(std::string, request_id, "", "request id for the server's logs");
ABSL_FLAG(int, partial_images, 0,
          "previews to save while the images denoise (0 to 3): each output's "
          "path with -step<N> added, as it arrives");
ABSL_FLAG(int, priority, 0,
          "queue priority: a larger one runs before queued smaller ones");
ABSL_FLAG(std::string, service, "", "service name for `health`");
ABSL_FLAG(std::string, tls_ca, "",
          "PEM CA certificates to verify the server by; set to use TLS");
ABSL_FLAG(std::string, tls_client_cert, "",
          "PEM client certificate for mutual TLS (with --tls_client_key)");
ABSL_FLAG(std::string, tls_client_key, "", "PEM key of --tls_client_cert");
ABSL_FLAG(std::string, token, "",
          "bearer token for servers started with --auth_token_file "
          "(default: $DITSERVE_TOKEN)");

namespace ditserve::ditctl {
namespace {

constexpr int kMaxMessageBytes = 256 << 20;

// The PEM contents of `path`; exits naming `flag` when it cannot be read
// or holds no PEM block: gRPC would take an empty CA for its default roots
// and fail the handshake later, as an unreachable server.
std::string ReadPemOrExit(const char* flag, const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream contents;
  // Nothing inserted (an empty file, a folder) fails `contents`.
  if (file) contents << file.rdbuf();
  if (!file || !contents) {
    std::cerr << "ditctl: --" << flag << " " << path << " cannot be read ("
              << (file ? "empty, or a folder" : std::strerror(errno)) << ")\n";
    std::exit(2);
  }
  if (!absl::StrContains(contents.str(), "-----BEGIN ")) {
    std::cerr << "ditctl: --" << flag << " " << path
              << " is not PEM (no -----BEGIN line)\n";
    std::exit(2);
  }
  return contents.str();
}

std::shared_ptr<grpc::ChannelCredentials> Credentials() {
  if (absl::GetFlag(FLAGS_tls_ca).empty()) {
    return grpc::InsecureChannelCredentials();
  }
  grpc::SslCredentialsOptions options;
  options.pem_root_certs = ReadPemOrExit("tls_ca", absl::GetFlag(FLAGS_tls_ca));
  if (!absl::GetFlag(FLAGS_tls_client_cert).empty()) {
    options.pem_cert_chain =
        ReadPemOrExit("tls_client_cert", absl::GetFlag(FLAGS_tls_client_cert));
    options.pem_private_key =
        ReadPemOrExit("tls_client_key", absl::GetFlag(FLAGS_tls_client_key));
  }
  return grpc::SslCredentials(options);
}

std::shared_ptr<grpc::Channel> Connect() {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxMessageBytes);
  if (const double keepalive = absl::GetFlag(FLAGS_keepalive); keepalive != 0) {
    args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, static_cast<int>(keepalive * 1000));
    args.SetInt(
        GRPC_ARG_KEEPALIVE_TIMEOUT_MS,
        static_cast<int>(absl::GetFlag(FLAGS_keepalive_timeout) * 1000));
    // gRPC would stop after two pings while ditctl sends nothing, which is
    // all of a call once its request is out.
    args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  }
  return grpc::CreateCustomChannel(absl::GetFlag(FLAGS_server), Credentials(),
                                   args);
}

// The call's deadline, and its bearer token when there is one.
void PrepareContext(grpc::ClientContext& context) {
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::milliseconds(static_cast<int64_t>(
                           absl::GetFlag(FLAGS_timeout) * 1000)));
  std::string token = absl::GetFlag(FLAGS_token);
  if (const char* from_environment = std::getenv("DITSERVE_TOKEN");
      token.empty() && from_environment != nullptr) {
    token = from_environment;
  }
  if (!token.empty()) {
    context.AddMetadata("authorization", absl::StrCat("Bearer ", token));
  }
}

int Fail(const grpc::Status& status) {
  std::cerr << "ditctl: " << DescribeError(status, absl::GetFlag(FLAGS_server))
            << "\n";
  return 1;
}

std::string ToJson(const google::protobuf::Message& message) {
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.always_print_primitive_fields = true;
  if (!google::protobuf::util::MessageToJsonString(message, &json, options)
           .ok()) {
    return message.DebugString();
  }
  return json;
}

// `base` with `suffix` inserted before its extension.
std::string WithSuffix(const std::string& base, const std::string& suffix) {
  if (suffix.empty()) return base;
  const size_t dot = base.find_last_of('.');
  const size_t slash = base.find_last_of('/');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) {
    return base + suffix;
  }
  return absl::StrCat(base.substr(0, dot), suffix, base.substr(dot));
}

// Where output `image` of a request of `prompts` prompts goes: -P for the
// prompt when there are several, -fNNN for a PNG or JPEG frame of a video.
std::string OutputPath(const std::string& base, const v1::Image& image,
                       const v1::InputConfig& config) {
  std::string suffix;
  if (config.prompt_size() > 1)
    absl::StrAppend(&suffix, "-", image.prompt_index());
  if (config.num_frames() > 1 && image.num_frames() == 1) {
    absl::StrAppend(&suffix, absl::StrFormat("-f%03d", image.frame_index()));
  }
  return WithSuffix(base, suffix);
}

// Writes `data` to `path`; false (after saying so) when it cannot.
bool WriteOutput(const std::string& path, absl::string_view data) {
  const absl::Status written = WriteOutputFile(path, data);
  if (!written.ok()) std::cerr << "ditctl: " << written.message() << "\n";
  return written.ok();
}

int Generate(const std::vector<std::string>& prompts) {
  if (prompts.empty()) {
    std::cerr << "ditctl: generate needs at least one prompt\n";
    return 2;
  }
  v1::GenerateRequest request;
  for (const std::string& prompt : prompts) request.add_prompt(prompt);
  if (const std::string negative = absl::GetFlag(FLAGS_negative);
      !negative.empty()) {
    request.add_negative_prompt(negative);
  }
  if (auto w = absl::GetFlag(FLAGS_W)) request.set_width(*w);
  if (auto h = absl::GetFlag(FLAGS_H)) request.set_height(*h);
  if (auto s = absl::GetFlag(FLAGS_steps)) request.set_num_inference_steps(*s);
  if (auto s = absl::GetFlag(FLAGS_seed)) request.set_seed(*s);
  if (auto g = absl::GetFlag(FLAGS_guidance)) request.set_guidance_scale(*g);
  if (auto m = absl::GetFlag(FLAGS_max_sequence_length)) {
    request.set_max_sequence_length(*m);
  }
  if (auto f = absl::GetFlag(FLAGS_frames)) request.set_num_frames(*f);
  if (auto f = absl::GetFlag(FLAGS_fps)) request.set_fps(*f);
  if (absl::GetFlag(FLAGS_dynamic_cfg)) request.set_use_dynamic_cfg(true);
  if (absl::GetFlag(FLAGS_vae_tiling)) request.set_vae_tiling(true);
  const absl::StatusOr<v1::OutputFormat> format =
      ParseOutputFormat(absl::GetFlag(FLAGS_format), absl::GetFlag(FLAGS_o));
  if (!format.ok()) {
    std::cerr << "ditctl: " << format.status().message() << "\n";
    return 2;
  }
  request.set_output_format(*format);
  const std::string output_path = absl::GetFlag(FLAGS_o).empty()
                                      ? DefaultOutputPath(*format)
                                      : absl::GetFlag(FLAGS_o);
  if (const absl::Status writable = CheckOutputPath(output_path);
      !writable.ok() && !absl::GetFlag(FLAGS_validate_only)) {
    std::cerr << "ditctl: " << writable.message() << "\n";
    return 2;
  }
  if (auto q = absl::GetFlag(FLAGS_quality)) request.set_output_quality(*q);
  request.set_validate_only(absl::GetFlag(FLAGS_validate_only));
  request.set_request_id(absl::GetFlag(FLAGS_request_id));
  request.set_priority(absl::GetFlag(FLAGS_priority));
  request.set_partial_images(absl::GetFlag(FLAGS_partial_images));

  auto stub = v1::Generation::NewStub(Connect());
  grpc::ClientContext context;
  PrepareContext(context);
  auto reader = stub->GenerateStream(&context, request);
  v1::GenerateStreamResponse message;
  v1::GenerateResponse result;
  bool has_result = false;
  v1::InputConfig accepted;
  ChunkedOutputs chunked;
  // Previews begun, by (partial_image_index, prompt_index, frame_index):
  // the PNG frames of a video preview are outputs of one prompt.
  std::map<std::tuple<int, int, int>, std::string> previews;
  bool progress_shown = false;
  // Set when a preview could not be written or the stream broke its slicing.
  bool stopped = false;
  // Ends the run on the host too; Read returns false next.
  const auto stop = [&](const std::string& why) {
    if (progress_shown) std::cerr << "\n";
    progress_shown = false;
    if (!why.empty()) std::cerr << "ditctl: " << why << "\n";
    context.TryCancel();
    stopped = true;
  };
  while (reader->Read(&message)) {
    switch (message.event_case()) {
      case v1::GenerateStreamResponse::kAccepted:
        accepted = message.accepted().config();
        std::cerr << "accepted: request "
                  << message.accepted().config().request_id()
                  << ", queue position " << message.accepted().queue_position()
                  << "\n";
        break;
      case v1::GenerateStreamResponse::kProgress:
        std::cerr << "\r"
                  << RenderProgress(message.progress().step(),
                                    message.progress().total_steps(),
                                    message.progress().elapsed_seconds())
                  << std::flush;
        progress_shown = true;
        break;
      case v1::GenerateStreamResponse::kImageChunk:
        if (const absl::Status added = chunked.Add(message.image_chunk());
            !added.ok()) {
          stop(std::string(added.message()));
        }
        break;
      case v1::GenerateStreamResponse::kPartialImage: {
        const auto& partial = message.partial_image();
        std::string& data = previews[{partial.partial_image_index(),
                                      partial.image().prompt_index(),
                                      partial.image().frame_index()}];
        absl::StatusOr<bool> joined = AppendSlice(
            absl::StrCat("preview ", partial.partial_image_index(),
                         " of output ", partial.image().prompt_index(),
                         " frame ", partial.image().frame_index()),
            partial.offset(), partial.total_bytes(), partial.image().data(),
            data);
        if (!joined.ok()) {
          stop(std::string(joined.status().message()));
          break;
        }
        if (!*joined) break;
        const std::string path =
            WithSuffix(OutputPath(output_path, partial.image(), accepted),
                       absl::StrCat("-step", partial.step()));
        if (const absl::Status written = WriteOutputFile(path, data);
            !written.ok()) {
          stop(std::string(written.message()));
          break;
        }
        std::cerr << (progress_shown ? "\n" : "") << "preview after step "
                  << partial.step() << ": " << path << "\n";
        progress_shown = false;
        data.clear();
        break;
      }
      case v1::GenerateStreamResponse::kResult:
        result = message.result();
        has_result = true;
        break;
      default:
        break;
    }
  }
  if (progress_shown) std::cerr << "\n";
  const grpc::Status status = reader->Finish();
  if (stopped) return 1;
  if (!status.ok()) return Fail(status);
  // An OK end without the result would otherwise exit 0 having written
  // nothing.
  if (!has_result) {
    std::cerr << "ditctl: the stream ended without its result\n";
    return 1;
  }
  if (request.validate_only()) {
    std::cout << ToJson(result.config()) << "\n";
    return 0;
  }
  for (int i = 0; i < result.images_size(); ++i) {
    const absl::StatusOr<absl::string_view> data = chunked.Data(result, i);
    if (!data.ok()) {
      std::cerr << "ditctl: " << data.status().message() << "\n";
      return 1;
    }
    const v1::Image& image = result.images(i);
    const std::string path = OutputPath(output_path, image, result.config());
    if (!WriteOutput(path, *data)) return 1;
    std::cout << path << " (" << image.width() << "x" << image.height();
    if (image.num_frames() > 1)
      std::cout << ", " << image.num_frames() << " frames";
    std::cout << ", " << image.mime_type();
    // A result of a server that is not this version's may not carry it.
    if (image.prompt_index() >= 0 &&
        image.prompt_index() < result.config().seeds_size()) {
      std::cout << ", seed " << result.config().seeds(image.prompt_index());
    }
    std::cout << ")\n";
  }
  for (const v1::StageTiming& timing : result.timings()) {
    if (timing.rank() == 0) {
      std::cerr << "  " << timing.stage() << ": " << timing.seconds() << " s\n";
    }
  }
  return 0;
}

int Info() {
  auto stub = v1::Generation::NewStub(Connect());
  grpc::ClientContext context;
  PrepareContext(context);
  v1::ServerInfo info;
  const grpc::Status status =
      stub->GetServerInfo(&context, v1::GetServerInfoRequest(), &info);
  if (!status.ok()) return Fail(status);
  std::cout << ToJson(info) << "\n";
  return 0;
}

int Health() {
  auto stub = grpc::health::v1::Health::NewStub(Connect());
  grpc::ClientContext context;
  PrepareContext(context);
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(absl::GetFlag(FLAGS_service));
  grpc::health::v1::HealthCheckResponse response;
  const grpc::Status status = stub->Check(&context, request, &response);
  if (!status.ok()) return Fail(status);
  std::cout << grpc::health::v1::HealthCheckResponse::ServingStatus_Name(
                   response.status())
            << "\n";
  return response.status() == grpc::health::v1::HealthCheckResponse::SERVING
             ? 0
             : 3;
}

}  // namespace
}  // namespace ditserve::ditctl

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "ditctl <generate PROMPT... | info | health> [flags]\n"
      "  generate  make one image (or video) per prompt (progress on "
      "stderr)\n"
      "  info      print the served model, parallel config and defaults\n"
      "  health    print SERVING / NOT_SERVING (exit 0 only when SERVING)");
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  if (args.size() < 2) {
    std::cerr << absl::ProgramUsageMessage() << "\n";
    return 2;
  }
  if (const absl::Status checked = ditserve::ditctl::CheckConnectionFlags(
          {.timeout_seconds = absl::GetFlag(FLAGS_timeout),
           .keepalive_seconds = absl::GetFlag(FLAGS_keepalive),
           .keepalive_timeout_seconds = absl::GetFlag(FLAGS_keepalive_timeout),
           .tls_ca = absl::GetFlag(FLAGS_tls_ca),
           .tls_client_cert = absl::GetFlag(FLAGS_tls_client_cert),
           .tls_client_key = absl::GetFlag(FLAGS_tls_client_key)});
      !checked.ok()) {
    std::cerr << "ditctl: " << checked.message() << "\n";
    return 2;
  }
  const std::string command = args[1];
  if (command == "generate") {
    return ditserve::ditctl::Generate(
        std::vector<std::string>(args.begin() + 2, args.end()));
  }
  if (command == "info") return ditserve::ditctl::Info();
  if (command == "health") return ditserve::ditctl::Health();
  std::cerr << "ditctl: unknown command \"" << command
            << "\"; use generate, info or health\n";
  return 2;
}
