#include "server/http_api.h"

#include <httplib.h>

#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "core/base/monotonic_clock.h"
#include "core/base/steady_wait.h"
#include "core/base/utf8.h"
#include "core/config/field_error.h"
#include "nlohmann/json.hpp"
#include "server/http_access_log.h"
#include "server/http_refusal.h"
#include "server/http_request_rewrite.h"
#include "server/http_server.h"
#include "server/log_text.h"
#include "server/metrics.h"
#include "server/openai_images.h"
#include "server/peer_socket.h"
#include "server/status_conversion.h"
#include "spdlog/spdlog.h"

namespace ditserve::server {
namespace {

constexpr char kJson[] = "application/json";
constexpr char kGenerationsPath[] = "/v1/images/generations";
constexpr char kModelsPath[] = "/v1/models";
constexpr char kModelPath[] = R"(/v1/models/([^/]+))";
constexpr char kHealthPath[] = "/health";

const std::vector<HttpRoute>& Routes() {
  static const auto* routes = new std::vector<HttpRoute>{
      {"POST", kGenerationsPath, absl::StrCat("POST ", kGenerationsPath)},
      {"GET", kModelsPath, absl::StrCat("GET ", kModelsPath)},
      {"GET", kModelPath, absl::StrCat("GET ", kModelsPath, "/{model}")},
      {"GET", kHealthPath, absl::StrCat("GET ", kHealthPath)}};
  return *routes;
}

// Handler threads beyond those that wait for generations. cpp-httplib gives
// each open connection one, an idle one too until its keep-alive timeout
// (kHttpIoTimeoutSeconds) ends it, and queues the rest's requests: clients'
// connection pools keep several open between requests.
constexpr int kSpareThreads = 64;
// How often a waiting handler checks that its client is still there.
constexpr absl::Duration kPeerCheckInterval = absl::Milliseconds(100);
// The longest a stream stays silent: well under the minute a proxy commonly
// waits before closing an idle connection.
constexpr absl::Duration kKeepAliveInterval = absl::Seconds(15);

void ReplyError(const absl::Status& status, httplib::Response& response) {
  response.status = HttpStatusFor(status.code());
  if (IsNotRetryable(status)) {
    // The OpenAI SDKs retry every 429 unless told otherwise.
    response.set_header("x-should-retry", "false");
  } else if (status.code() == absl::StatusCode::kResourceExhausted ||
             status.code() == absl::StatusCode::kUnavailable) {
    response.set_header("Retry-After", "1");
  }
  response.set_content(ErrorBody(status), kJson);
}

// The body, of which at most kMaxBodyBytes are kept: cpp-httplib's
// set_payload_max_length bounds only a body with a Content-Length, and would
// hold a chunked or unframed one whole in memory. The rest is read and
// dropped, so that the connection's next request starts where it should.
// nullopt when the body is too long (status 413), could not be read
// (cpp-httplib's status) or is not JSON (415: also what keeps a page on
// another origin from posting a text/plain "simple request" with no
// preflight); the error handler explains each.
std::optional<std::string> ReadBoundedBody(
    const httplib::Request& request, const httplib::ContentReader& read_body,
    httplib::Response& response) {
  std::string body;
  bool too_long = false;
  const bool read = read_body([&](const char* data, size_t length) {
    too_long = too_long || body.size() + length > kMaxBodyBytes;
    if (!too_long) body.append(data, length);
    return true;
  });
  if (too_long) {
    response.status = 413;
  } else if (!read) {
    if (response.status < 400) response.status = 400;
  } else if (!SentJson(request)) {
    response.status = 415;
  } else {
    return body;
  }
  return std::nullopt;
}

nlohmann::json ModelObject(const ServedModel& model) {
  return {{"id", std::string(model.spec.defaults.name)},
          {"object", "model"},
          {"created", 0},
          {"owned_by", "ditserve"}};
}

// The job's outcome, handed from the scheduler thread to the handler.
class Outcome {
 public:
  void Set(absl::StatusOr<v1::GenerateResponse> outcome) {
    {
      absl::MutexLock lock(&mu_);
      outcome_ = std::move(outcome);
    }
    done_.Notify();
  }
  bool WaitFor(absl::Duration timeout) {
    return done_.WaitForNotificationWithTimeout(timeout);
  }
  absl::StatusOr<v1::GenerateResponse> Take() {
    absl::MutexLock lock(&mu_);
    return *std::move(outcome_);
  }

 private:
  base::SteadyNotification done_;
  absl::Mutex mu_;
  std::optional<absl::StatusOr<v1::GenerateResponse>> outcome_
      ABSL_GUARDED_BY(mu_);
};

// What a streamed request's job reports, handed from the scheduler thread
// to the handler thread, which turns it into events: the scheduler only
// moves messages, so a large output's base64 does not hold up the next run.
class JobReports {
 public:
  explicit JobReports(RequestIntake* intake) : intake_(intake) {}

  void AddEvent(v1::GenerateStreamResponse event) {
    absl::MutexLock lock(&mu_);
    events_.push_back(std::move(event));
    reported_.SignalAll();
  }
  void Finish(absl::StatusOr<v1::GenerateResponse> outcome) {
    absl::MutexLock lock(&mu_);
    answered_ok_ = outcome.ok();
    outcome_ = std::move(outcome);
    reported_.SignalAll();
    CountIfUndeliveredLocked();
  }
  // The stream ended before all of the job's events were written, for
  // `reason` (kStreamWriteTimedOut or kStreamClientGone); the first reason
  // given is the one counted.
  void StreamBroke(const char* reason) {
    absl::MutexLock lock(&mu_);
    if (broken_because_ != nullptr) return;
    broken_because_ = reason;
    CountIfUndeliveredLocked();
  }
  // Waits up to `timeout` for a report; moves the events reported so far
  // into `events`, and returns the outcome once the job has finished.
  std::optional<absl::StatusOr<v1::GenerateResponse>> Take(
      absl::Duration timeout, std::vector<v1::GenerateStreamResponse>& events) {
    absl::MutexLock lock(&mu_);
    reported_.AwaitWithTimeout(
        mu_, [this]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return ReadyLocked(); },
        timeout);
    events.swap(events_);
    events_.clear();
    return std::exchange(outcome_, std::nullopt);
  }
  // The refusal of a job that admission finished at once.
  absl::Status Refusal() const {
    absl::MutexLock lock(&mu_);
    return outcome_.has_value() ? outcome_->status() : absl::OkStatus();
  }

 private:
  bool ReadyLocked() const ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return outcome_.has_value() || !events_.empty();
  }

  // A job counted ok (by RequestIntake's NewJob) whose events did not all
  // reach the connection, counted again as the gRPC streams are; it counts
  // once, from whichever of the two calls comes second. A client that leaves
  // before its run is answered has it cancelled instead (Scheduler::Answer).
  void CountIfUndeliveredLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (answered_ok_ && broken_because_ != nullptr) {
      intake_->CountUndeliveredStream(broken_because_);
    }
  }

  RequestIntake* const intake_;
  mutable absl::Mutex mu_;
  base::SteadyCondVar reported_;
  std::vector<v1::GenerateStreamResponse> events_ ABSL_GUARDED_BY(mu_);
  std::optional<absl::StatusOr<v1::GenerateResponse>> outcome_
      ABSL_GUARDED_BY(mu_);
  bool answered_ok_ ABSL_GUARDED_BY(mu_) = false;
  const char* broken_because_ ABSL_GUARDED_BY(mu_) = nullptr;
};

}  // namespace

HttpApi::HttpApi(RequestIntake* intake, const HealthService* health,
                 const BearerAuth* auth, const CorsPolicy* cors,
                 bool access_log)
    : intake_(intake),
      health_(health),
      auth_(auth),
      cors_(cors),
      access_log_(access_log) {}

absl::StatusOr<std::string> HttpApi::Authorize(const httplib::Request& request,
                                               httplib::Response& response,
                                               bool is_health) const {
  if (is_health && !auth_->guards_health()) return kNoClient;
  absl::StatusOr<std::string> client =
      auth_->Authenticate(request.get_header_value("Authorization"));
  if (!client.ok()) {
    ReplyError(client.status(), response);
    response.set_header("WWW-Authenticate", "Bearer");
  } else if (access_log_) {
    SetHttpAccessClient(*client);
  }
  return client;
}

int HttpApi::threads() const {
  const config::ServerOptions& options = intake_->model().options;
  return options.max_queue + options.max_batch + kSpareThreads;
}

void HttpApi::AddRoutes(httplib::Server& server) const {
  if (access_log_) server.set_logger(LogHttpAccess);
  server.set_pre_routing_handler(
      [this](const httplib::Request& request, httplib::Response& response) {
        if (access_log_) StartHttpAccessTimer();
        // cpp-httplib hands a const view of the Request it owns, a local of
        // its own that is not const.
        RewriteRequestHeaders(const_cast<httplib::Request&>(request));
        RouteUnreadBodiesToTheDrain(const_cast<httplib::Request&>(request));
        return cors_->Handle(Routes(), request, response)
                   ? httplib::Server::HandlerResponse::Handled
                   : httplib::Server::HandlerResponse::Unhandled;
      });
  server.Post(
      kGenerationsPath,
      [this](const httplib::Request& request, httplib::Response& response,
             const httplib::ContentReader& read_body) {
        const std::optional<std::string> body =
            ReadBoundedBody(request, read_body, response);
        if (!body.has_value()) return;
        const absl::StatusOr<std::string> client =
            Authorize(request, response, false);
        if (!client.ok()) {
          intake_->CountUnadmitted(client.status(), kNoClient);
          return;
        }
        GenerateImages(request, *body, *client, response);
      });
  server.Get(kModelsPath, [this](const httplib::Request& request,
                                 httplib::Response& response) {
    if (Authorize(request, response, false).ok()) ListModels(response);
  });
  server.Get(kModelPath, [this](const httplib::Request& request,
                                httplib::Response& response) {
    if (Authorize(request, response, false).ok()) GetModel(request, response);
  });
  server.Get(kHealthPath, [this](const httplib::Request& request,
                                 httplib::Response& response) {
    if (Authorize(request, response, true).ok()) Health(response);
  });
  server.set_exception_handler([](const httplib::Request& request,
                                  httplib::Response& response,
                                  std::exception_ptr thrown) {
    std::string what = "an exception that is not a std::exception";
    try {
      std::rethrow_exception(thrown);
    } catch (const std::exception& exception) {
      what = exception.what();
    } catch (...) {
    }
    spdlog::error("HTTP {} {} failed: {}", LogText(request.method),
                  LogText(request.path), LogText(what));
    ReplyError(absl::InternalError(
                   absl::StrCat("the host failed while handling ",
                                request.method, "; its log has the cause")),
               response);
  });
  server.set_error_handler([this](const httplib::Request& request,
                                  httplib::Response& response) {
    // A Range header cpp-httplib could not parse whole answers 416 before
    // the pre-routing handler, keeping the ranges it parsed for this answer.
    RewriteRequestHeaders(const_cast<httplib::Request&>(request));
    if (!response.body.empty()) return;
    const HttpRefusal refusal =
        ExplainHttpRefusal(Routes(), request, response.status, kMaxBodyBytes);
    // A generation refused before its handler ran is still a refused request.
    if (request.method == "POST" && request.path == kGenerationsPath) {
      intake_->CountUnadmitted(refusal.status, kNoClient);
    }
    ReplyError(refusal.status, response);
    response.status = refusal.http_status;
    if (!refusal.allow.empty()) response.set_header("Allow", refusal.allow);
  });
}

void HttpApi::GenerateImages(const httplib::Request& request,
                             const std::string& body, const std::string& client,
                             httplib::Response& response) const {
  const absl::Time received = base::MonotonicNow();
  absl::StatusOr<ImagesRequest> parsed =
      ParseImagesRequest(body, intake_->model().options.max_batch);
  absl::StatusOr<v1::InputConfig> config =
      parsed.ok() ? intake_->Freeze(parsed->request, absl::InfiniteFuture(),
                                    request.get_header_value(kRequestIdHeader))
                  : parsed.status();
  if (!config.ok()) {
    intake_->CountUnadmitted(config.status(), client);
    ReplyError(config.status(), response);
    return;
  }
  response.set_header(kRequestIdHeader, config->request_id());
  if (!parsed->user.empty()) {
    spdlog::info("request {} is for user \"{}\"", config->request_id(),
                 LogText(parsed->user));
  }
  if (parsed->stream) {
    StreamImages(request, *std::move(config), client, received, response);
    return;
  }
  auto outcome = std::make_shared<Outcome>();
  std::shared_ptr<Job> job =
      intake_->NewJob(*std::move(config), client, received, nullptr,
                      [outcome](absl::StatusOr<v1::GenerateResponse> result) {
                        outcome->Set(std::move(result));
                      });
  std::optional<int> socket = FindPeerSocket(
      request.remote_addr, request.remote_port, request.local_port);
  intake_->Enqueue(job);
  // Bounded by the job: the scheduler finishes every admitted job, and an
  // abandoned one stops at its next denoising step.
  while (!outcome->WaitFor(kPeerCheckInterval)) {
    if (socket.has_value() && PeerHasClosed(*socket)) {
      intake_->Abandon(job);
      socket.reset();
    }
  }
  absl::StatusOr<v1::GenerateResponse> result = outcome->Take();
  if (!result.ok()) {
    ReplyError(result.status(), response);
    return;
  }
  response.set_content(ImagesResponseBody(*result, absl::Now()), kJson);
}

void HttpApi::StreamImages(const httplib::Request& request,
                           v1::InputConfig config, const std::string& client,
                           absl::Time received,
                           httplib::Response& response) const {
  auto reports = std::make_shared<JobReports>(intake_);
  std::shared_ptr<Job> job = intake_->NewJob(
      std::move(config), client, received,
      [reports](v1::GenerateStreamResponse event) {
        reports->AddEvent(std::move(event));
      },
      [reports](absl::StatusOr<v1::GenerateResponse> outcome) {
        reports->Finish(std::move(outcome));
      });
  // Counted from before admission, so that a drain that ends at once does
  // not miss it.
  open_streams_.fetch_add(1);
  bool admitted = false;
  intake_->Enqueue(job, [&admitted](int) { admitted = true; });
  // A refusal at admission (queue full, draining) keeps its HTTP status.
  if (!admitted) {
    open_streams_.fetch_sub(1);
    ReplyError(reports->Refusal(), response);
    return;
  }
  std::optional<int> socket = FindPeerSocket(
      request.remote_addr, request.remote_port, request.local_port);
  response.set_header("Cache-Control", "no-cache");
  response.set_chunked_content_provider(
      "text/event-stream",
      // Called again until it calls done() or returns false; each call waits
      // at most kPeerCheckInterval, and the scheduler finishes every admitted
      // job, so the stream ends.
      [reports, socket, last_write = base::MonotonicNow()](
          size_t, httplib::DataSink& sink) mutable {
        const auto send = [&sink, &last_write,
                           &reports](const std::string& event) {
          last_write = base::MonotonicNow();
          if (sink.write(event.data(), event.size())) return true;
          // cpp-httplib gives up on a write after its write timeout, and at
          // once on a connection the client closed.
          const bool stalled = base::MonotonicNow() - last_write >=
                               absl::Seconds(kHttpIoTimeoutSeconds) / 2;
          reports->StreamBroke(stalled ? kStreamWriteTimedOut
                                       : kStreamClientGone);
          return false;
        };
        std::vector<v1::GenerateStreamResponse> events;
        std::optional<absl::StatusOr<v1::GenerateResponse>> outcome =
            reports->Take(kPeerCheckInterval, events);
        for (const v1::GenerateStreamResponse& event : events) {
          if (!send(event.has_partial_image()
                        ? PartialImageEvent(event.partial_image(), absl::Now())
                        : ProgressEvent(event.progress()))) {
            return false;
          }
        }
        if (outcome.has_value()) {
          const std::vector<std::string> last =
              outcome->ok()
                  ? CompletedEvents(**outcome, absl::Now())
                  : std::vector<std::string>{ErrorEvent(outcome->status())};
          for (const std::string& event : last) {
            if (!send(event)) return false;
          }
          sink.done();
          return true;
        }
        if (socket.has_value() && PeerHasClosed(*socket)) return false;
        if (base::MonotonicNow() - last_write < kKeepAliveInterval) return true;
        return send(kKeepAliveEvent);
      },
      // A client that left stops the run at its next step. cpp-httplib
      // calls this once the response is done with, sent or not.
      [this, job, reports](bool complete) {
        if (!complete) {
          intake_->Abandon(job);
          reports->StreamBroke(kStreamClientGone);
        }
        open_streams_.fetch_sub(1);
      });
}

void HttpApi::WaitForOpenStreams(absl::Duration timeout) const {
  if (const int open = open_streams_.load(); open > 0) {
    spdlog::info("waiting up to {} for {} open event streams to end",
                 absl::FormatDuration(timeout), open);
  }
  const absl::Time give_up = base::MonotonicNow() + timeout;
  while (open_streams_.load() > 0 && base::MonotonicNow() < give_up) {
    absl::SleepFor(absl::Milliseconds(10));
  }
}

void HttpApi::ListModels(httplib::Response& response) const {
  const nlohmann::json body = {
      {"object", "list"},
      {"data", nlohmann::json::array({ModelObject(intake_->model())})}};
  response.set_content(body.dump(), kJson);
}

void HttpApi::GetModel(const httplib::Request& request,
                       httplib::Response& response) const {
  const std::string id = request.matches[1];
  const ServedModel& model = intake_->model();
  if (id != model.spec.defaults.name) {
    ReplyError(config::WithFields(absl::NotFoundError(absl::StrCat(
                                      "model \"", base::Shortened(id),
                                      "\" is not served here; this server "
                                      "runs \"",
                                      model.spec.defaults.name, "\"")),
                                  {"model"}),
               response);
    return;
  }
  response.set_content(ModelObject(model).dump(), kJson);
}

void HttpApi::Health(httplib::Response& response) const {
  const bool serving = health_->serving();
  response.status = serving ? 200 : 503;
  response.set_content(
      nlohmann::json{{"status", serving ? "serving" : "not_serving"}}.dump(),
      kJson);
}

}  // namespace ditserve::server
