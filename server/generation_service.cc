#include "server/generation_service.h"

#include <chrono>
#include <deque>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/config/freeze.h"
#include "core/config/model_defaults.h"
#include "server/status_conversion.h"
#include "spdlog/spdlog.h"

namespace ditserve::server {
namespace {

int64_t DeadlineMicros(const grpc::CallbackServerContext& context) {
  const std::chrono::system_clock::time_point deadline = context.deadline();
  if (deadline == std::chrono::system_clock::time_point::max()) return 0;
  return std::chrono::duration_cast<std::chrono::microseconds>(
             deadline.time_since_epoch())
      .count();
}

// The status a job gets when its client goes away: gRPC cancels the call
// both on client cancellation and when the deadline passes.
absl::Status AbandonedStatus(const Job& job) {
  if (absl::Now() >= job.deadline()) {
    return absl::DeadlineExceededError("deadline passed");
  }
  return absl::CancelledError("cancelled by the client");
}

}  // namespace

// Generate: answers once, when the job finishes (or at once for bad input
// and validate_only). Owned by shared_ptrs held by itself until OnDone and by
// the job's callback, so a late completion never touches freed memory.
class GenerationService::UnaryCall : public grpc::ServerUnaryReactor {
 public:
  UnaryCall(AdmissionQueue* queue, v1::GenerateResponse* response)
      : queue_(queue), response_(response) {}

  void Bind(std::shared_ptr<UnaryCall> self) { self_ = std::move(self); }

  void SetJob(std::shared_ptr<Job> job) {
    absl::MutexLock lock(&mu_);
    job_ = std::move(job);
  }

  void Complete(absl::StatusOr<v1::GenerateResponse> outcome) {
    if (outcome.ok()) {
      *response_ = *std::move(outcome);
      Finish(grpc::Status::OK);
    } else {
      Finish(ToGrpcStatus(outcome.status()));
    }
  }

  void OnCancel() override {
    std::shared_ptr<Job> job;
    {
      absl::MutexLock lock(&mu_);
      job = job_;
    }
    if (job == nullptr) return;
    job->Cancel();
    if (queue_->Remove(job)) job->Finish(AbandonedStatus(*job));
  }

  void OnDone() override { self_.reset(); }

 private:
  AdmissionQueue* const queue_;
  v1::GenerateResponse* const response_;
  std::shared_ptr<UnaryCall> self_;
  absl::Mutex mu_;
  std::shared_ptr<Job> job_ ABSL_GUARDED_BY(mu_);
};

// GenerateStream: accepted → progress per step → image chunks → result. One
// write is in flight at a time; messages wait in `pending_`.
class GenerationService::StreamCall
    : public grpc::ServerWriteReactor<v1::GenerateStreamResponse> {
 public:
  explicit StreamCall(AdmissionQueue* queue) : queue_(queue) {}

  void Bind(std::shared_ptr<StreamCall> self) { self_ = std::move(self); }

  void SetJob(std::shared_ptr<Job> job) {
    absl::MutexLock lock(&mu_);
    job_ = std::move(job);
  }

  void Send(v1::GenerateStreamResponse message) {
    absl::MutexLock lock(&mu_);
    if (closing_) return;
    pending_.push_back(std::move(message));
    if (!writing_) StartNextWriteLocked();
  }

  void Close(const grpc::Status& status) {
    absl::MutexLock lock(&mu_);
    if (closing_) return;
    closing_ = true;
    final_status_ = status;
    if (!writing_) Finish(final_status_);
  }

  void Complete(absl::StatusOr<v1::GenerateResponse> outcome) {
    if (!outcome.ok()) {
      Close(ToGrpcStatus(outcome.status()));
      return;
    }
    for (int i = 0; i < outcome->images_size(); ++i) {
      v1::Image* image = outcome->mutable_images(i);
      const auto size = static_cast<int64_t>(image->data().size());
      if (size <= kStreamChunkBytes) continue;
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
    Close(grpc::Status::OK);
  }

  void OnWriteDone(bool ok) override {
    absl::MutexLock lock(&mu_);
    writing_ = false;
    pending_.pop_front();
    if (!ok) {
      // The client is gone; OnCancel follows.
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
    std::shared_ptr<Job> job;
    {
      absl::MutexLock lock(&mu_);
      job = job_;
    }
    if (job == nullptr) return;
    job->Cancel();
    if (queue_->Remove(job)) job->Finish(AbandonedStatus(*job));
  }

  void OnDone() override { self_.reset(); }

 private:
  void StartNextWriteLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    writing_ = true;
    StartWrite(&pending_.front());
  }

  AdmissionQueue* const queue_;
  std::shared_ptr<StreamCall> self_;
  absl::Mutex mu_;
  std::shared_ptr<Job> job_ ABSL_GUARDED_BY(mu_);
  std::deque<v1::GenerateStreamResponse> pending_ ABSL_GUARDED_BY(mu_);
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool closing_ ABSL_GUARDED_BY(mu_) = false;
  grpc::Status final_status_ ABSL_GUARDED_BY(mu_);
};

GenerationService::GenerationService(ServedModel model, AdmissionQueue* queue,
                                     Metrics* metrics)
    : model_(std::move(model)), queue_(queue), metrics_(metrics) {}

absl::StatusOr<v1::InputConfig> GenerationService::FreezeRequest(
    const v1::GenerateRequest& request,
    const grpc::CallbackServerContext& context) {
  config::FreezeContext freeze_context;
  freeze_context.sequence_number = next_sequence_.fetch_add(1);
  freeze_context.generated_request_id =
      absl::StrCat("req-", freeze_context.sequence_number);
  {
    absl::MutexLock lock(&rng_mu_);
    // Below 2^63 so that a batch's consecutive seeds never wrap.
    freeze_context.drawn_seed =
        absl::Uniform<uint64_t>(rng_, 0, uint64_t{1} << 63);
  }
  freeze_context.deadline_unix_micros = DeadlineMicros(context);
  return config::Freeze(request, model_.spec, model_.options, model_.parallel,
                        freeze_context);
}

grpc::ServerUnaryReactor* GenerationService::Generate(
    grpc::CallbackServerContext* context, const v1::GenerateRequest* request,
    v1::GenerateResponse* response) {
  const absl::Time received = absl::Now();
  auto call = std::make_shared<UnaryCall>(queue_, response);
  call->Bind(call);
  absl::StatusOr<v1::InputConfig> config = FreezeRequest(*request, *context);
  if (!config.ok() || request->validate_only()) {
    metrics_->CountRequest(StatusLabel(config.status().code()));
    if (config.ok()) *response->mutable_config() = *config;
    call->Complete(
        config.ok() ? absl::StatusOr<v1::GenerateResponse>(std::move(*response))
                    : config.status());
    return call.get();
  }
  Metrics* metrics = metrics_;
  auto job = std::make_shared<Job>(
      *std::move(config), received, absl::Now(), nullptr,
      [call, metrics](absl::StatusOr<v1::GenerateResponse> outcome) {
        metrics->CountRequest(StatusLabel(outcome.status().code()));
        call->Complete(std::move(outcome));
      });
  call->SetJob(job);
  absl::StatusOr<int> position = queue_->Push(job);
  if (!position.ok()) job->Finish(position.status());
  return call.get();
}

grpc::ServerWriteReactor<v1::GenerateStreamResponse>*
GenerationService::GenerateStream(grpc::CallbackServerContext* context,
                                  const v1::GenerateRequest* request) {
  const absl::Time received = absl::Now();
  auto call = std::make_shared<StreamCall>(queue_);
  call->Bind(call);
  absl::StatusOr<v1::InputConfig> config = FreezeRequest(*request, *context);
  if (!config.ok() || request->validate_only()) {
    metrics_->CountRequest(StatusLabel(config.status().code()));
    if (config.ok()) {
      v1::GenerateResponse response;
      *response.mutable_config() = *config;
      call->Complete(std::move(response));
    } else {
      call->Close(ToGrpcStatus(config.status()));
    }
    return call.get();
  }
  Metrics* metrics = metrics_;
  const v1::InputConfig frozen = *config;
  auto job = std::make_shared<Job>(
      *std::move(config), received, absl::Now(),
      [call](const v1::GenerateStreamResponse::Progress& progress) {
        v1::GenerateStreamResponse message;
        *message.mutable_progress() = progress;
        call->Send(std::move(message));
      },
      [call, metrics](absl::StatusOr<v1::GenerateResponse> outcome) {
        metrics->CountRequest(StatusLabel(outcome.status().code()));
        call->Complete(std::move(outcome));
      });
  call->SetJob(job);
  absl::StatusOr<int> position =
      queue_->Push(job, [&call, &frozen](int queue_position) {
        v1::GenerateStreamResponse accepted;
        accepted.mutable_accepted()->set_queue_position(queue_position);
        *accepted.mutable_accepted()->mutable_config() = frozen;
        call->Send(std::move(accepted));
      });
  if (!position.ok()) job->Finish(position.status());
  return call.get();
}

grpc::ServerUnaryReactor* GenerationService::GetServerInfo(
    grpc::CallbackServerContext* context,
    const v1::GetServerInfoRequest* /*request*/, v1::ServerInfo* response) {
  const config::ModelDefaults& defaults = model_.spec.defaults;
  response->set_model(std::string(defaults.name));
  response->set_model_dir(model_.model_dir);
  response->set_world_size(model_.parallel.world_size());
  *response->mutable_parallel() = model_.parallel;
  *response->mutable_defaults() = config::ToProto(defaults);
  v1::RequestLimits* limits = response->mutable_limits();
  limits->set_max_batch(model_.options.max_batch);
  limits->set_size_multiple(model_.spec.size_multiple());
  limits->set_max_side_pixels(model_.options.max_side_pixels);
  limits->set_max_pixels(model_.options.max_pixels);
  limits->set_max_frames(model_.options.max_frames);
  limits->set_max_video_pixels(model_.options.max_video_pixels);
  limits->set_max_inference_steps(model_.options.max_inference_steps);
  limits->set_max_sequence_length(defaults.max_sequence_length_limit);
  limits->set_max_prompt_bytes(model_.options.max_prompt_bytes);
  limits->set_max_queue(model_.options.max_queue);
  response->set_version(model_.version);
  response->set_torch_version(model_.torch_version);
  response->set_backend(model_.backend);
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

}  // namespace ditserve::server
