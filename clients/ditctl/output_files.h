#ifndef DITSERVE_CLIENTS_DITCTL_OUTPUT_FILES_H_
#define DITSERVE_CLIENTS_DITCTL_OUTPUT_FILES_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ditserve/v1/generation.pb.h"

namespace ditserve::ditctl {

// --format `name` (png, jpeg, webp, rgb8, latent, mp4, in any case); empty:
// the format `path`'s extension names in any case (.png, .jpg or .jpeg,
// .webp, .mp4), else png. INVALID_ARGUMENT for an unknown name, or one
// whose data `path`'s extension would misname (rgb8 into x.png, PNG frames
// into x.mp4).
absl::StatusOr<v1::OutputFormat> ParseOutputFormat(const std::string& name,
                                                   const std::string& path);

// The output file when -o is not given: out.png, out.jpg, out.webp,
// out.mp4, and out.rgb or out.f32 for the raw formats, so that no raw bytes
// land in a file named as an image.
std::string DefaultOutputPath(v1::OutputFormat format);

// OK when outputs can be written at `path` and beside it (the -P, -fNNN and
// -stepN names): `path` is no folder and its folder exists and can be
// written to, or `path` is an existing link, device or FIFO that can be
// written to. INVALID_ARGUMENT naming -o otherwise, checked before a
// generation runs for outputs that could not be kept.
absl::Status CheckOutputPath(const std::string& path);

// Writes `data` to `path` through `path`.part, renamed once whole: a failed
// write (a full disk) leaves the file that was there, or none, never a
// cut-short output. A `path` that is a symbolic link, device or FIFO is
// written to directly. UNAVAILABLE naming `path` and the system's reason
// when it cannot.
absl::Status WriteOutputFile(const std::string& path, absl::string_view data);

}  // namespace ditserve::ditctl

#endif  // DITSERVE_CLIENTS_DITCTL_OUTPUT_FILES_H_
