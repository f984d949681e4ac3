#include "tools/local_cluster/streamed_generation.h"

#include <map>
#include <memory>
#include <tuple>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "clients/ditctl/append_slice.h"
#include "grpcpp/grpcpp.h"

namespace ditserve::local_cluster {

absl::StatusOr<StreamedGeneration> StreamGeneration(
    ServingCluster& cluster, const v1::GenerateRequest& request,
    double seconds) {
  auto context = ContextWithDeadline(seconds);
  std::unique_ptr<grpc::ClientReader<v1::GenerateStreamResponse>> reader =
      cluster.generation().GenerateStream(context.get(), request);
  StreamedGeneration streamed;
  // The previews begun: (partial_image_index, prompt_index, frame_index) →
  // so far; the PNG frames of a video preview are outputs of one prompt.
  std::map<std::tuple<int, int, int>, v1::GenerateStreamResponse::PartialImage>
      started;
  bool has_result = false;
  absl::Status broken;
  v1::GenerateStreamResponse message;
  while (reader->Read(&message)) {
    const auto* field = message.GetDescriptor()->FindOneofByName("event");
    const auto* set =
        message.GetReflection()->GetOneofFieldDescriptor(message, field);
    streamed.events.push_back(set == nullptr ? "" : set->name());
    if (message.has_result()) {
      streamed.result = message.result();
      has_result = true;
    }
    if (!message.has_partial_image() || !broken.ok()) continue;
    const v1::GenerateStreamResponse::PartialImage& slice =
        message.partial_image();
    const std::tuple<int, int, int> key = {slice.partial_image_index(),
                                           slice.image().prompt_index(),
                                           slice.image().frame_index()};
    auto [whole, first] = started.try_emplace(key, slice);
    if (first) whole->second.mutable_image()->clear_data();
    absl::StatusOr<bool> complete = ditctl::AppendSlice(
        absl::StrCat("partial_image ", std::get<0>(key), " of output ",
                     std::get<1>(key), " frame ", std::get<2>(key)),
        slice.offset(), slice.total_bytes(), slice.image().data(),
        *whole->second.mutable_image()->mutable_data());
    if (!complete.ok()) {
      broken = complete.status();
    } else if (*complete) {
      whole->second.set_offset(0);
      streamed.partial_images.push_back(std::move(whole->second));
      started.erase(whole);
    }
  }
  const grpc::Status status = reader->Finish();
  if (!status.ok()) {
    return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                        status.error_message());
  }
  if (!broken.ok()) return broken;
  if (!started.empty()) {
    return absl::InternalError(
        absl::StrCat(started.size(), " previews never came whole"));
  }
  if (!has_result) {
    return absl::InternalError("the stream ended without a result");
  }
  return streamed;
}

}  // namespace ditserve::local_cluster
