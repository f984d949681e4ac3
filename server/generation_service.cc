#include "server/generation_service.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "core/base/monotonic_clock.h"
#include "core/base/status_macros.h"
#include "core/config/field_error.h"
#include "core/config/freeze.h"
#include "core/config/message_decoding.h"
#include "core/config/model_defaults.h"
#include "grpc/support/time.h"
#include "grpcpp/alarm.h"
#include "server/call_ownership.h"
#include "server/metrics.h"
#include "server/status_conversion.h"
#include "spdlog/spdlog.h"

namespace ditserve::server {
namespace {

absl::Time Deadline(const grpc::CallbackServerContext& context) {
  const std::chrono::system_clock::time_point deadline = context.deadline();
  if (deadline == std::chrono::system_clock::time_point::max()) {
    return absl::InfiniteFuture();
  }
  return absl::FromChrono(deadline);
}

// Clients see the folder's name, not where the host keeps it.
std::string FolderName(const std::string& path) {
  std::filesystem::path normal = std::filesystem::path(path).lexically_normal();
  if (!normal.has_filename()) normal = normal.parent_path();
  return normal.filename().string();
}

// The bytes of a received message.
std::string Bytes(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  std::string bytes;
  if (!buffer.Dump(&slices).ok()) return bytes;
  bytes.reserve(buffer.Length());
  for (const grpc::Slice& slice : slices) {
    bytes.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
  }
  return bytes;
}

// `message` serialised for sending; a message under gRPC's size limit always
// serialises.
template <typename Message>
grpc::ByteBuffer Encode(const Message& message) {
  grpc::ByteBuffer buffer;
  bool own_buffer = false;
  grpc::SerializationTraits<Message>::Serialize(message, &buffer, &own_buffer);
  return buffer;
}

// The bytes of the outputs of `config` where the output format fixes them
// (RGB8 pixels, float32 latents); nullopt for encoded formats.
std::optional<int64_t> RawOutputBytes(const v1::InputConfig& config) {
  if (config.output_format() == v1::OUTPUT_FORMAT_RGB8) {
    return int64_t{config.prompt_size()} * std::max(config.num_frames(), 1) *
           config.height() * config.width() * 3;
  }
  if (config.output_format() == v1::OUTPUT_FORMAT_LATENT_F32) {
    int64_t elements = config.prompt_size();
    for (const int32_t side : config.shapes().image_latent_shape()) {
      elements *= side;
    }
    return elements * int64_t{sizeof(float)};
  }
  return std::nullopt;
}

// The request a call carries, or INVALID_ARGUMENT naming what did not parse.
absl::StatusOr<v1::GenerateRequest> DecodeGenerateRequest(
    const grpc::ByteBuffer& bytes) {
  v1::GenerateRequest request;
  RETURN_IF_ERROR(config::ParseRequest(Bytes(bytes), request));
  return request;
}

// A refusal or failure the same request would meet again: a negative
// pushback stops gRPC's retry policies (gRFC A6). Only before the call's
// Finish, which sends the trailing metadata and may end the context.
void StopRetriesOfTheNotRetryable(grpc::CallbackServerContext& context,
                                  const absl::Status& status) {
  if (IsNotRetryable(status)) {
    context.AddTrailingMetadata("grpc-retry-pushback-ms", "-1");
  }
}

}  // namespace

absl::StatusOr<v1::InputConfig> GenerationService::FreezeCall(
    grpc::CallbackServerContext& context,
    const absl::StatusOr<std::string>& client,
    const absl::StatusOr<v1::GenerateRequest>& request) const {
  RETURN_IF_ERROR(client.status());
  RETURN_IF_ERROR(request.status());
  const auto header = context.client_metadata().find(kRequestIdHeader);
  absl::StatusOr<v1::InputConfig> config = intake_->Freeze(
      *request, Deadline(context),
      header == context.client_metadata().end()
          ? absl::string_view()
          : absl::string_view(header->second.data(), header->second.size()));
  return config;
}

// Generate: answers once, when the job finishes (or at once for bad input
// and validate_only).
class GenerationService::UnaryCall : public grpc::ServerUnaryReactor {
 public:
  UnaryCall(grpc::CallbackServerContext* context, RequestIntake* intake,
            grpc::ByteBuffer* response)
      : context_(context), intake_(intake), response_(response) {}

  CallOwnership& ownership() { return ownership_; }

  // Why `response` cannot go out in one message: encoded outputs, whose
  // size was not known before the run, can still be too many. Runs before
  // Complete, so that the job is counted with this answer.
  absl::Status Deliverable(const v1::GenerateResponse& response) {
    const size_t bytes = response.ByteSizeLong();
    if (bytes <= static_cast<size_t>(kMaxMessageBytes)) {
      return absl::OkStatus();
    }
    // The same request would be refused again.
    return MarkNotRetryable(absl::ResourceExhaustedError(absl::StrCat(
        "the response took ", bytes, " bytes, over Generate's ",
        kMaxMessageBytes,
        "-byte message limit; use GenerateStream, which sends outputs in "
        "chunks")));
  }

  void Complete(absl::StatusOr<v1::GenerateResponse> outcome) {
    if (outcome.ok()) {
      *response_ = Encode(*outcome);
      Finish(grpc::Status::OK);
    } else {
      StopRetriesOfTheNotRetryable(*context_, outcome.status());
      Finish(ToGrpcStatus(outcome.status()));
    }
  }

  void OnCancel() override {
    if (std::shared_ptr<Job> job = ownership_.job()) intake_->Abandon(job);
  }

  void OnDone() override { ownership_.Release(); }

 private:
  grpc::CallbackServerContext* const context_;
  RequestIntake* const intake_;
  grpc::ByteBuffer* const response_;
  CallOwnership ownership_;
};

// GenerateStream: accepted → progress per step (and partial images) → image
// chunks → result. One write is in flight at a time; messages wait in
// `pending_`. A write the client has not taken within `write_timeout`
// cancels the call (GenerationService's constructor says why).
class GenerationService::StreamCall
    : public grpc::ServerWriteReactor<grpc::ByteBuffer>,
      public std::enable_shared_from_this<StreamCall> {
 public:
  StreamCall(grpc::CallbackServerContext* context, RequestIntake* intake,
             absl::Duration write_timeout)
      : context_(context), intake_(intake), write_timeout_(write_timeout) {}

  CallOwnership& ownership() { return ownership_; }

  void Send(v1::GenerateStreamResponse message) {
    absl::MutexLock lock(&mu_);
    if (closing_) return;
    pending_.push_back(Encode(message));
    if (!writing_) StartNextWriteLocked();
  }

  // Sends a job's event; a partial image larger than the chunk size goes in
  // slices of it, each an event of its own.
  void SendEvent(v1::GenerateStreamResponse event) {
    if (!event.has_partial_image()) {
      Send(std::move(event));
      return;
    }
    v1::Image* image = event.mutable_partial_image()->mutable_image();
    const std::string data = std::move(*image->mutable_data());
    image->clear_data();
    const auto size = static_cast<int64_t>(data.size());
    int64_t offset = 0;
    do {
      v1::GenerateStreamResponse slice = event;
      slice.mutable_partial_image()->set_offset(offset);
      slice.mutable_partial_image()->mutable_image()->set_data(
          data.substr(offset, kStreamChunkBytes));
      Send(std::move(slice));
      offset += kStreamChunkBytes;
    } while (offset < size);
  }

  void Close(const absl::Status& status) {
    absl::MutexLock lock(&mu_);
    if (closing_) return;
    closing_ = true;
    // Under the lock after the closing_ check: a call that gRPC finished
    // (a failed write) may have freed its context since.
    StopRetriesOfTheNotRetryable(*context_, status);
    final_status_ = ToGrpcStatus(status);
    if (!writing_) Finish(final_status_);
  }

  void Complete(absl::StatusOr<v1::GenerateResponse> outcome) {
    if (!outcome.ok()) {
      Close(outcome.status());
      return;
    }
    {
      absl::MutexLock lock(&mu_);
      counted_ok_ = true;
      CountIfUndeliveredLocked();
    }
    // `result` keeps at most one chunk's worth of data, so that it fits a
    // client's default 4 MiB receive limit however many outputs there are.
    int64_t inline_left = kStreamChunkBytes;
    for (int i = 0; i < outcome->images_size(); ++i) {
      v1::Image* image = outcome->mutable_images(i);
      const auto size = static_cast<int64_t>(image->data().size());
      if (size <= inline_left) {
        inline_left -= size;
        continue;
      }
      for (int64_t offset = 0; offset < size; offset += kStreamChunkBytes) {
        v1::GenerateStreamResponse message;
        v1::GenerateStreamResponse::ImageChunk* chunk =
            message.mutable_image_chunk();
        chunk->set_image_index(i);
        chunk->set_offset(offset);
        chunk->set_total_bytes(size);
        chunk->set_data(image->data().substr(offset, kStreamChunkBytes));
        Send(std::move(message));
      }
      image->clear_data();
    }
    v1::GenerateStreamResponse last;
    *last.mutable_result() = *std::move(outcome);
    Send(std::move(last));
    Close(absl::OkStatus());
  }

  void OnWriteDone(bool ok) override {
    absl::MutexLock lock(&mu_);
    writing_ = false;
    write_alarm_.reset();
    pending_.pop_front();
    if (!ok) {
      // The client is gone, or OnWriteStalled sent it away; OnCancel
      // follows.
      write_failed_ = true;
      CountIfUndeliveredLocked();
      pending_.clear();
      closing_ = true;
      Finish(grpc::Status::CANCELLED);
      return;
    }
    if (!pending_.empty()) {
      StartNextWriteLocked();
    } else if (closing_) {
      Finish(final_status_);
    }
  }

  void OnCancel() override {
    if (std::shared_ptr<Job> job = ownership_.job()) intake_->Abandon(job);
  }

  void OnDone() override { ownership_.Release(); }

 private:
  // A call counted "ok" (by RequestIntake's NewJob, or CountUnadmitted for
  // validate_only) whose outputs the host could not all hand to the
  // connection: its stream broke, before or after the run ended. Called as
  // either flag is set, it counts once: only the second call sees both. A
  // failed run is counted by its status already.
  void CountIfUndeliveredLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (!write_failed_ || !counted_ok_) return;
    intake_->CountUndeliveredStream(write_timed_out_ ? kStreamWriteTimedOut
                                                     : kStreamClientGone);
  }

  void StartNextWriteLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    writing_ = true;
    const uint64_t write = ++writes_started_;
    // A fresh alarm for each write: dropping the last one cancels it, while
    // setting it again could race its cancelled callback. On the monotonic
    // clock, so that a wall-clock step neither fires it early nor late.
    write_alarm_ = std::make_unique<grpc::Alarm>();
    write_alarm_->Set(
        gpr_time_add(
            gpr_now(GPR_CLOCK_MONOTONIC),
            gpr_time_from_micros(absl::ToInt64Microseconds(write_timeout_),
                                 GPR_TIMESPAN)),
        // Weak: a call gRPC is done with must not wait for its alarm.
        [call = weak_from_this(), write](bool fired) {
          if (!fired) return;
          if (std::shared_ptr<StreamCall> live = call.lock()) {
            live->OnWriteStalled(write);
          }
        });
    StartWrite(&pending_.front());
  }

  // The write numbered `write` has waited `write_timeout_`: its client reads
  // nothing (a stalled or forgotten stream), and HTTP/2 flow control holds
  // it, with every message queued behind it, however long the call lasts.
  void OnWriteStalled(uint64_t write) {
    {
      absl::MutexLock lock(&mu_);
      // Under the lock after the check, as in Close: once that write is done
      // the call may have finished and gRPC freed its context.
      if (!writing_ || write != writes_started_) return;
      write_timed_out_ = true;
      // The write in flight fails; OnWriteDone finishes the call and drops
      // the queued messages, and OnCancel stops a job still running.
      context_->TryCancel();
    }
    const std::shared_ptr<Job> job = ownership_.job();
    spdlog::warn(
        "request_id={} GenerateStream cancelled: its client took no message "
        "for {} (--stream_write_timeout_s)",
        job != nullptr ? job->config().request_id() : std::string("-"),
        absl::FormatDuration(write_timeout_));
  }

  grpc::CallbackServerContext* const context_;
  RequestIntake* const intake_;
  const absl::Duration write_timeout_;
  CallOwnership ownership_;
  absl::Mutex mu_;
  std::deque<grpc::ByteBuffer> pending_ ABSL_GUARDED_BY(mu_);
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  // Numbers the writes, so that a late alarm of an earlier one is ignored.
  uint64_t writes_started_ ABSL_GUARDED_BY(mu_) = 0;
  std::unique_ptr<grpc::Alarm> write_alarm_ ABSL_GUARDED_BY(mu_);
  bool write_timed_out_ ABSL_GUARDED_BY(mu_) = false;
  bool write_failed_ ABSL_GUARDED_BY(mu_) = false;
  bool counted_ok_ ABSL_GUARDED_BY(mu_) = false;
  bool closing_ ABSL_GUARDED_BY(mu_) = false;
  grpc::Status final_status_ ABSL_GUARDED_BY(mu_);
};

GenerationService::GenerationService(RequestIntake* intake,
                                     const BearerAuth* auth,
                                     absl::Duration stream_write_timeout)
    : intake_(intake),
      auth_(auth),
      stream_write_timeout_(stream_write_timeout) {}

grpc::ServerUnaryReactor* GenerationService::Generate(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request_bytes,
    grpc::ByteBuffer* response_bytes) {
  const absl::Time received = base::MonotonicNow();
  auto call = std::make_shared<UnaryCall>(context, intake_, response_bytes);
  call->ownership().Bind(call);
  absl::StatusOr<v1::GenerateRequest> request =
      DecodeGenerateRequest(*request_bytes);
  const absl::StatusOr<std::string> client = auth_->AuthenticateCall(*context);
  // Before Freeze, whose memory estimate counts the previews: a request
  // that fits without them would be told to ask for smaller outputs.
  absl::StatusOr<v1::InputConfig> config =
      client.ok() && request.ok() && request->partial_images() != 0
          ? absl::StatusOr<v1::InputConfig>(config::InvalidField(
                "partial_images",
                absl::StrCat(
                    "partial_images ", request->partial_images(),
                    " needs GenerateStream, which streams the previews; "
                    "Generate returns the final images only: leave it 0")))
          : FreezeCall(*context, client, request);
  // Refused now rather than by gRPC's send limit after the whole run.
  if (const std::optional<int64_t> bytes =
          config.ok() ? RawOutputBytes(*config) : std::nullopt;
      bytes.has_value() && *bytes > kMaxMessageBytes - kStreamChunkBytes) {
    // The same request would be refused again.
    config = MarkNotRetryable(absl::ResourceExhaustedError(absl::StrCat(
        "output_format ", v1::OutputFormat_Name(config->output_format()),
        ": Generate would answer with ", *bytes, " bytes of outputs, over its ",
        kMaxMessageBytes,
        "-byte message limit; use GenerateStream, which sends outputs in "
        "chunks, or an encoded output_format")));
  }
  if (!config.ok() || request->validate_only()) {
    intake_->CountUnadmitted(config.status(), client.value_or(kNoClient));
    v1::GenerateResponse response;
    if (config.ok()) *response.mutable_config() = *config;
    call->Complete(
        config.ok() ? absl::StatusOr<v1::GenerateResponse>(std::move(response))
                    : config.status());
    return call.get();
  }
  std::shared_ptr<Job> job = intake_->NewJob(
      *std::move(config), *client, received, nullptr,
      [call](absl::StatusOr<v1::GenerateResponse> outcome) {
        call->Complete(std::move(outcome));
      },
      [call](const v1::GenerateResponse& response) {
        return call->Deliverable(response);
      });
  call->ownership().SetJob(job);
  intake_->Enqueue(job);
  return call.get();
}

grpc::ServerWriteReactor<grpc::ByteBuffer>* GenerationService::GenerateStream(
    grpc::CallbackServerContext* context,
    const grpc::ByteBuffer* request_bytes) {
  const absl::Time received = base::MonotonicNow();
  auto call =
      std::make_shared<StreamCall>(context, intake_, stream_write_timeout_);
  call->ownership().Bind(call);
  absl::StatusOr<v1::GenerateRequest> request =
      DecodeGenerateRequest(*request_bytes);
  const absl::StatusOr<std::string> client = auth_->AuthenticateCall(*context);
  absl::StatusOr<v1::InputConfig> config =
      FreezeCall(*context, client, request);
  if (!config.ok() || request->validate_only()) {
    intake_->CountUnadmitted(config.status(), client.value_or(kNoClient));
    if (config.ok()) {
      v1::GenerateResponse response;
      *response.mutable_config() = *config;
      call->Complete(std::move(response));
    } else {
      call->Close(config.status());
    }
    return call.get();
  }
  std::shared_ptr<Job> job = intake_->NewJob(
      *std::move(config), *client, received,
      [call](v1::GenerateStreamResponse event) {
        call->SendEvent(std::move(event));
      },
      [call](absl::StatusOr<v1::GenerateResponse> outcome) {
        call->Complete(std::move(outcome));
      });
  call->ownership().SetJob(job);
  intake_->Enqueue(job, [&call, &job](int queue_position) {
    v1::GenerateStreamResponse accepted;
    accepted.mutable_accepted()->set_queue_position(queue_position);
    *accepted.mutable_accepted()->mutable_config() = job->config();
    call->Send(std::move(accepted));
  });
  return call.get();
}

grpc::ServerUnaryReactor* GenerationService::GetServerInfo(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request_bytes,
    grpc::ByteBuffer* response_bytes) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  v1::GetServerInfoRequest request;
  absl::Status allowed = auth_->AuthenticateCall(*context).status();
  if (allowed.ok())
    allowed = config::ParseRequest(Bytes(*request_bytes), request);
  if (!allowed.ok()) {
    reactor->Finish(ToGrpcStatus(allowed));
    return reactor;
  }
  v1::ServerInfo info;
  const ServedModel& model = intake_->model();
  const config::ModelDefaults& defaults = model.spec.defaults;
  info.set_model(std::string(defaults.name));
  info.set_model_dir(FolderName(model.model_dir));
  info.set_world_size(model.parallel.world_size());
  *info.mutable_parallel() = model.parallel;
  *info.mutable_defaults() = config::ToProto(defaults);
  info.set_vae_tile_height(model.spec.vae_tile_height);
  info.set_vae_tile_width(model.spec.vae_tile_width);
  info.set_prompt_cache_bytes(model.prompt_cache_bytes);
  v1::RequestLimits* limits = info.mutable_limits();
  limits->set_max_batch(model.options.max_batch);
  limits->set_size_multiple(model.spec.size_multiple());
  limits->set_max_side_pixels(model.options.max_side_pixels);
  limits->set_max_height(
      config::MostSidePixels(model.spec.max_height, model.options));
  limits->set_max_width(
      config::MostSidePixels(model.spec.max_width, model.options));
  limits->set_max_pixels(model.options.max_pixels);
  limits->set_max_frames(model.options.max_frames);
  limits->set_max_video_pixels(model.options.max_video_pixels);
  limits->set_max_inference_steps(model.options.max_inference_steps);
  limits->set_max_sequence_length(defaults.max_sequence_length_limit);
  limits->set_max_prompt_bytes(model.options.max_prompt_bytes);
  limits->set_max_queue(model.options.max_queue);
  limits->set_max_queued_per_client(model.options.max_queued_per_client);
  limits->set_max_request_bytes(model.options.max_request_bytes);
  info.set_version(model.version);
  info.set_torch_version(model.torch_version);
  info.set_backend(model.backend);
  info.set_dtype(model.dtype);
  *response_bytes = Encode(info);
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

}  // namespace ditserve::server
