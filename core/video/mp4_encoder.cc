#include "core/video/mp4_encoder.h"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavformat/avio.h>
#include <libavformat/version.h>
#include <libavutil/dict.h>
#include <libavutil/error.h>
#include <libavutil/frame.h>
#include <libavutil/imgutils.h>
#include <libavutil/log.h>
#include <libavutil/mem.h>
#include <libswscale/swscale.h>
}

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <new>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/base/status_macros.h"

namespace ditserve::video {
namespace {

// Visually lossless: 50-56 dB PSNR (yuv420p) on FFmpeg's test patterns.
constexpr char kCrf[] = "18";
// Under a second for 49 frames of 720x480 on two busy cores, against minutes
// of denoising; slower presets only shave bytes.
constexpr char kPreset[] = "medium";
// Off: x264 0.164's AVX-512 macroblock-tree code reads uninitialised memory,
// so the bytes changed with what malloc returned (MALLOC_PERTURB_ showed it;
// without AVX-512, or with mbtree off, they did not). The price is files
// some 25-70% larger at this crf, of slightly higher quality.
constexpr char kMbtree[] = "0";
// x264's output depends on its thread count, whose default follows the core
// count: a fixed count gives the same bytes on machines of different sizes.
constexpr int kEncoderThreads = 4;
constexpr int kIoBufferSize = 64 * 1024;

struct FormatContextDeleter {
  void operator()(AVFormatContext* context) const {
    avformat_free_context(context);
  }
};
struct CodecContextDeleter {
  void operator()(AVCodecContext* context) const {
    avcodec_free_context(&context);
  }
};
struct FrameDeleter {
  void operator()(AVFrame* frame) const { av_frame_free(&frame); }
};
struct PacketDeleter {
  void operator()(AVPacket* packet) const { av_packet_free(&packet); }
};
struct SwsContextDeleter {
  void operator()(SwsContext* context) const { sws_freeContext(context); }
};
// FFmpeg may have replaced the buffer given to avio_alloc_context: free the
// one the context holds now.
struct IoContextDeleter {
  void operator()(AVIOContext* context) const {
    av_freep(&context->buffer);
    avio_context_free(&context);
  }
};

// Options for avcodec_open2 / avformat_write_header, which take a pointer to
// the dictionary and leave in it what they did not use.
struct Options {
  AVDictionary* dictionary = nullptr;
  Options() = default;
  Options(const Options&) = delete;
  Options& operator=(const Options&) = delete;
  ~Options() { av_dict_free(&dictionary); }
};

// The MP4 file being written. The muxer seeks back to patch box sizes and,
// for faststart, to shift the media data behind the moov box.
struct MemoryFile {
  std::string bytes;
  int64_t position = 0;
};

// The same file read back: the muxer's faststart pass reopens its output for
// reading (AVFormatContext::io_open), which custom IO has to provide.
struct MemoryReader {
  const MemoryFile* file = nullptr;
  int64_t position = 0;
};

// AVIO's seek contract: AVSEEK_SIZE asks for the size, AVSEEK_FORCE is a hint.
int64_t Seek(int64_t size, int64_t offset, int whence, int64_t* position) {
  if (whence & AVSEEK_SIZE) return size;
  int64_t target = 0;
  switch (whence & ~AVSEEK_FORCE) {
    case SEEK_SET:
      target = offset;
      break;
    case SEEK_CUR:
      target = *position + offset;
      break;
    case SEEK_END:
      target = size + offset;
      break;
    default:
      return AVERROR(EINVAL);
  }
  if (target < 0) return AVERROR(EINVAL);
  *position = target;
  return target;
}

// The bytes FFmpeg hands the write callback: const from libavformat 61
// (FFmpeg 7, Debian 13) on.
#if LIBAVFORMAT_VERSION_MAJOR >= 61
using WrittenBytes = const uint8_t*;
#else
using WrittenBytes = uint8_t*;
#endif

int WriteToFile(void* opaque, WrittenBytes data, int size) {
  auto* file = static_cast<MemoryFile*>(opaque);
  const size_t end = static_cast<size_t>(file->position) + size;
  try {  // No exception may cross FFmpeg's C frames.
    if (end > file->bytes.size()) file->bytes.resize(end);
  } catch (const std::bad_alloc&) {
    return AVERROR(ENOMEM);
  }
  std::memcpy(file->bytes.data() + file->position, data, size);
  file->position = static_cast<int64_t>(end);
  return size;
}

int64_t SeekInFile(void* opaque, int64_t offset, int whence) {
  auto* file = static_cast<MemoryFile*>(opaque);
  return Seek(static_cast<int64_t>(file->bytes.size()), offset, whence,
              &file->position);
}

int ReadFromFile(void* opaque, uint8_t* data, int size) {
  auto* reader = static_cast<MemoryReader*>(opaque);
  const int64_t left =
      static_cast<int64_t>(reader->file->bytes.size()) - reader->position;
  if (left <= 0) return AVERROR_EOF;
  const int count = static_cast<int>(std::min<int64_t>(size, left));
  std::memcpy(data, reader->file->bytes.data() + reader->position, count);
  reader->position += count;
  return count;
}

int64_t SeekInReader(void* opaque, int64_t offset, int whence) {
  auto* reader = static_cast<MemoryReader*>(opaque);
  return Seek(static_cast<int64_t>(reader->file->bytes.size()), offset, whence,
              &reader->position);
}

// AVFormatContext::io_open: the muxer's output (whatever the url), for
// reading only; the MP4 muxer opens nothing else.
int OpenForReading(AVFormatContext* format, AVIOContext** io,
                   const char* /*url*/, int flags, AVDictionary** /*options*/) {
  if (flags != AVIO_FLAG_READ) return AVERROR(ENOSYS);
  auto* buffer = static_cast<uint8_t*>(av_malloc(kIoBufferSize));
  auto* reader = new (std::nothrow)
      MemoryReader{static_cast<const MemoryFile*>(format->opaque), 0};
  if (buffer != nullptr && reader != nullptr) {
    *io = avio_alloc_context(buffer, kIoBufferSize, /*write_flag=*/0, reader,
                             ReadFromFile, nullptr, SeekInReader);
    if (*io != nullptr) return 0;
  }
  av_free(buffer);
  delete reader;
  return AVERROR(ENOMEM);
}

// AVFormatContext::io_close2 for what OpenForReading opened.
int CloseReader(AVFormatContext* /*format*/, AVIOContext* io) {
  delete static_cast<MemoryReader*>(io->opaque);
  IoContextDeleter()(io);
  return 0;
}

absl::Status FfmpegError(absl::string_view call, int error) {
  char message[AV_ERROR_MAX_STRING_SIZE] = {};
  av_strerror(error, message, sizeof(message));
  return absl::InternalError(
      absl::StrCat("MP4 encoding: ", call, " failed: ", message));
}

absl::Status CheckInput(const RgbVideo& video, int fps) {
  RETURN_IF_ERROR(CheckRgbVideo("MP4", video, std::numeric_limits<int>::max()));
  for (const auto& [name, value] :
       {std::pair<const char*, int>{"height", video.height},
        std::pair<const char*, int>{"width", video.width}}) {
    if (value % 2 != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "MP4 encoding: ", name, " must be even (yuv420p halves the chroma ",
          "resolution), got ", value));
    }
  }
  if (av_image_check_size(video.width, video.height, 0, nullptr) < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("MP4 encoding: width x height ", video.width, "x",
                     video.height, " is too large"));
  }
  return CheckFps("MP4", fps);
}

// Moves the encoder's finished packets into the muxer; returns at EAGAIN (it
// wants the next frame) or EOF (flushed).
absl::Status WritePackets(AVCodecContext* encoder, AVFormatContext* format,
                          AVStream* stream, AVPacket* packet) {
  while (true) {
    int error = avcodec_receive_packet(encoder, packet);
    if (error == AVERROR(EAGAIN) || error == AVERROR_EOF) {
      return absl::OkStatus();
    }
    if (error < 0) return FfmpegError("avcodec_receive_packet", error);
    // One frame each at a constant rate. libx264 leaves it 0 and the muxer
    // then guesses the last frame's from the one before: say it instead.
    if (packet->duration == 0) packet->duration = 1;
    av_packet_rescale_ts(packet, encoder->time_base, stream->time_base);
    packet->stream_index = stream->index;
    // Takes the packet's data, also on failure.
    error = av_interleaved_write_frame(format, packet);
    if (error < 0) return FfmpegError("av_interleaved_write_frame", error);
  }
}

}  // namespace

absl::StatusOr<std::string> EncodeMp4(const RgbVideo& video, int fps) {
  RETURN_IF_ERROR(CheckInput(video, fps));
  // FFmpeg logs to stderr at info level by default (x264's statistics, the
  // muxer's passes); keep its warnings and errors. Process-wide.
  static std::once_flag quiet_logging;
  std::call_once(quiet_logging, [] { av_log_set_level(AV_LOG_WARNING); });

  const AVCodec* codec = avcodec_find_encoder_by_name("libx264");
  if (codec == nullptr) codec = avcodec_find_encoder(AV_CODEC_ID_H264);
  if (codec == nullptr) {
    return absl::FailedPreconditionError(
        "MP4 encoding: this FFmpeg has no H.264 encoder (libx264 expected)");
  }

  // Declared before the contexts that use them, so destroyed after them.
  MemoryFile file;
  auto* io_buffer = static_cast<uint8_t*>(av_malloc(kIoBufferSize));
  if (io_buffer == nullptr) return FfmpegError("av_malloc", AVERROR(ENOMEM));
  std::unique_ptr<AVIOContext, IoContextDeleter> io(
      avio_alloc_context(io_buffer, kIoBufferSize, /*write_flag=*/1, &file,
                         nullptr, WriteToFile, SeekInFile));
  if (io == nullptr) {
    av_free(io_buffer);
    return FfmpegError("avio_alloc_context", AVERROR(ENOMEM));
  }

  AVFormatContext* format_raw = nullptr;
  int error =
      avformat_alloc_output_context2(&format_raw, nullptr, "mp4", nullptr);
  if (error < 0) return FfmpegError("avformat_alloc_output_context2", error);
  std::unique_ptr<AVFormatContext, FormatContextDeleter> format(format_raw);
  format->pb = io.get();
  // BITEXACT: no library version in the file, so equal input, equal bytes.
  format->flags |= AVFMT_FLAG_CUSTOM_IO | AVFMT_FLAG_BITEXACT;
  format->opaque = &file;
  format->io_open = OpenForReading;
  format->io_close2 = CloseReader;

  std::unique_ptr<AVCodecContext, CodecContextDeleter> encoder(
      avcodec_alloc_context3(codec));
  if (encoder == nullptr) {
    return FfmpegError("avcodec_alloc_context3", AVERROR(ENOMEM));
  }
  encoder->width = video.width;
  encoder->height = video.height;
  encoder->pix_fmt = AV_PIX_FMT_YUV420P;
  encoder->sample_aspect_ratio = AVRational{1, 1};
  // One tick a frame: ffprobe then reports r_frame_rate fps/1.
  encoder->time_base = AVRational{1, fps};
  encoder->framerate = AVRational{fps, 1};
  // The BT.601 limited-range matrix the conversion below uses, of sRGB
  // pixels (BT.709 primaries, sRGB transfer), as the pipelines' images are:
  // untagged, players guess, BT.709 for HD sizes.
  encoder->colorspace = AVCOL_SPC_SMPTE170M;
  encoder->color_range = AVCOL_RANGE_MPEG;
  encoder->color_primaries = AVCOL_PRI_BT709;
  encoder->color_trc = AVCOL_TRC_IEC61966_2_1;
  encoder->thread_count = kEncoderThreads;
  // MP4 keeps SPS/PPS in the avcC box, not in the stream.
  if (format->oformat->flags & AVFMT_GLOBALHEADER) {
    encoder->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
  }
  {
    // libx264's options; another H.264 encoder leaves them unused.
    Options options;
    av_dict_set(&options.dictionary, "preset", kPreset, 0);
    av_dict_set(&options.dictionary, "crf", kCrf, 0);
    av_dict_set(&options.dictionary, "mbtree", kMbtree, 0);
    error = avcodec_open2(encoder.get(), codec, &options.dictionary);
    if (error < 0) {
      return FfmpegError(absl::StrCat("avcodec_open2 (", codec->name, ")"),
                         error);
    }
  }

  AVStream* stream = avformat_new_stream(format.get(), nullptr);
  if (stream == nullptr) {
    return FfmpegError("avformat_new_stream", AVERROR(ENOMEM));
  }
  stream->time_base = encoder->time_base;  // A hint; the muxer picks its own.
  stream->avg_frame_rate = encoder->framerate;
  error = avcodec_parameters_from_context(stream->codecpar, encoder.get());
  if (error < 0) return FfmpegError("avcodec_parameters_from_context", error);
  {
    // faststart: the moov box (the index) ahead of the media data, so that a
    // player can start before the download ends. Its second pass reads the
    // output back through OpenForReading.
    Options options;
    av_dict_set(&options.dictionary, "movflags", "+faststart", 0);
    error = avformat_write_header(format.get(), &options.dictionary);
    if (error < 0) return FfmpegError("avformat_write_header", error);
  }

  // RGB (full range) to BT.601 limited-range YUV, chroma halved both ways.
  // BITEXACT and ACCURATE_RND keep swscale's SIMD paths from changing bytes.
  std::unique_ptr<SwsContext, SwsContextDeleter> converter(sws_getContext(
      video.width, video.height, AV_PIX_FMT_RGB24, video.width, video.height,
      AV_PIX_FMT_YUV420P, SWS_BICUBIC | SWS_ACCURATE_RND | SWS_BITEXACT,
      nullptr, nullptr, nullptr));
  if (converter == nullptr) {
    return absl::InternalError(
        "MP4 encoding: sws_getContext failed for rgb24 to yuv420p");
  }
  const int* bt601 = sws_getCoefficients(SWS_CS_ITU601);
  sws_setColorspaceDetails(converter.get(), bt601, /*srcRange=*/1, bt601,
                           /*dstRange=*/0, 0, 1 << 16, 1 << 16);

  // swscale's SIMD loads read up to 16 bytes past a row's end, which would
  // run off the end of the caller's buffer on the last frame (valgrind saw
  // it): each frame is copied into FFmpeg's padded buffer first.
  std::unique_ptr<AVFrame, FrameDeleter> rgb(av_frame_alloc());
  std::unique_ptr<AVFrame, FrameDeleter> yuv(av_frame_alloc());
  std::unique_ptr<AVPacket, PacketDeleter> packet(av_packet_alloc());
  if (rgb == nullptr || yuv == nullptr || packet == nullptr) {
    return FfmpegError("av_frame_alloc/av_packet_alloc", AVERROR(ENOMEM));
  }
  rgb->format = AV_PIX_FMT_RGB24;
  rgb->width = video.width;
  rgb->height = video.height;
  error = av_frame_get_buffer(rgb.get(), 0);
  if (error < 0) return FfmpegError("av_frame_get_buffer (rgb24)", error);
  // The copies below never write the padding, which swscale also reads (its
  // filters span more than a 2-pixel-wide row): zeros keep the output fixed.
  std::memset(rgb->buf[0]->data, 0, rgb->buf[0]->size);
  yuv->format = encoder->pix_fmt;
  yuv->width = encoder->width;
  yuv->height = encoder->height;
  yuv->sample_aspect_ratio = encoder->sample_aspect_ratio;
  yuv->colorspace = encoder->colorspace;
  yuv->color_range = encoder->color_range;
  yuv->color_primaries = encoder->color_primaries;
  yuv->color_trc = encoder->color_trc;
  error = av_frame_get_buffer(yuv.get(), 0);
  if (error < 0) return FfmpegError("av_frame_get_buffer (yuv420p)", error);
  // Likewise for its padding, which swscale does not write either.
  for (AVBufferRef* plane : yuv->buf) {
    if (plane != nullptr) std::memset(plane->data, 0, plane->size);
  }

  const int row_bytes = video.width * 3;
  const size_t frame_bytes = static_cast<size_t>(video.height) * row_bytes;
  for (int index = 0; index < video.frames; ++index) {
    av_image_copy_plane(rgb->data[0], rgb->linesize[0],
                        video.data + index * frame_bytes, row_bytes, row_bytes,
                        video.height);
    // The encoder may still hold the previous frame's buffer.
    error = av_frame_make_writable(yuv.get());
    if (error < 0) return FfmpegError("av_frame_make_writable", error);
    error = sws_scale(converter.get(), rgb->data, rgb->linesize, 0,
                      video.height, yuv->data, yuv->linesize);
    if (error < 0) return FfmpegError("sws_scale", error);
    yuv->pts = index;
    error = avcodec_send_frame(encoder.get(), yuv.get());
    if (error < 0) return FfmpegError("avcodec_send_frame", error);
    RETURN_IF_ERROR(
        WritePackets(encoder.get(), format.get(), stream, packet.get()));
  }
  // Flush: x264 holds frames back for lookahead and B-frames.
  error = avcodec_send_frame(encoder.get(), nullptr);
  if (error < 0) return FfmpegError("avcodec_send_frame (flush)", error);
  RETURN_IF_ERROR(
      WritePackets(encoder.get(), format.get(), stream, packet.get()));

  error = av_write_trailer(format.get());
  if (error < 0) return FfmpegError("av_write_trailer", error);
  avio_flush(io.get());
  if (io->error < 0) return FfmpegError("avio_flush", io->error);
  return std::move(file.bytes);
}

}  // namespace ditserve::video
