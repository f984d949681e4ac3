#include "tests/unit/video/moving_square.h"

#include <algorithm>

namespace ditserve::video {

std::string MovingSquare(int frames, int height, int width) {
  std::string rgb(static_cast<size_t>(frames) * height * width * 3, '\0');
  const int side = std::max(2, std::min(height, width) / 4 & ~1);
  for (int f = 0; f < frames; ++f) {
    const int top = (2 * f) % (height - side + 1) & ~1;
    const int left = (4 * f) % (width - side + 1) & ~1;
    for (int y = 0; y < height; ++y) {
      for (int x = 0; x < width; ++x) {
        auto* pixel = reinterpret_cast<uint8_t*>(
            &rgb[((static_cast<size_t>(f) * height + y) * width + x) * 3]);
        const bool in_square =
            y >= top && y < top + side && x >= left && x < left + side;
        pixel[0] = in_square ? 230 : x * 255 / std::max(1, width - 1);
        pixel[1] = in_square ? 30 : y * 255 / std::max(1, height - 1);
        pixel[2] = in_square ? 40
                             : (x + y) * 127 / std::max(1, width + height - 2) +
                                   8 * f % 64 + 32;
      }
    }
  }
  return rgb;
}

}  // namespace ditserve::video
