#ifndef DITSERVE_SERVER_MIME_TYPES_H_
#define DITSERVE_SERVER_MIME_TYPES_H_

// v1::Image.mime_type of each output format.

namespace ditserve::server {

inline constexpr char kPngMimeType[] = "image/png";
inline constexpr char kJpegMimeType[] = "image/jpeg";
inline constexpr char kWebpMimeType[] = "image/webp";
inline constexpr char kMp4MimeType[] = "video/mp4";
inline constexpr char kRgb8MimeType[] = "application/x-rgb8";
inline constexpr char kLatentMimeType[] = "application/x-latent-f32";

}  // namespace ditserve::server

#endif  // DITSERVE_SERVER_MIME_TYPES_H_
