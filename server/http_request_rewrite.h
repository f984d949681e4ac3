#ifndef DITSERVE_SERVER_HTTP_REQUEST_REWRITE_H_
#define DITSERVE_SERVER_HTTP_REQUEST_REWRITE_H_

// cpp-httplib 0.11 acts on some request headers before and after a handler
// runs, in ways an inference server must not let a client steer. The
// pre-routing handler rewrites them before any body is read.

#include <string>

namespace httplib {
struct Request;
}  // namespace httplib

namespace ditserve::server {

// - Drops Range: cpp-httplib would cut every response, POST answers and
//   errors included, into the listed ranges, copying the body once per range
//   (thousands fit in one header), where RFC 9110 has a server ignore Range
//   on anything but GET.
// - Drops Accept-Encoding: cpp-httplib would compress JSON answers on the
//   handler thread with brotli at quality 11, about 1 MB/s, to save at most a
//   quarter of base64 images.
// - Hides a multipart/form-data Content-Type behind kUnparsedMultipartPrefix,
//   so that its body is read as plain bytes under the body limit:
//   cpp-httplib's multipart parser buffers without bound.
void RewriteRequestHeaders(httplib::Request& request);

// The Content-Type the client sent, before RewriteRequestHeaders.
std::string SentContentType(const httplib::Request& request);

// Whether the client sent a JSON body's Content-Type: application/json, with
// parameters or not, in any case.
bool SentJson(const httplib::Request& request);

inline constexpr char kUnparsedMultipartPrefix[] = "x-ditserve-unparsed-";

}  // namespace ditserve::server

#endif  // DITSERVE_SERVER_HTTP_REQUEST_REWRITE_H_
