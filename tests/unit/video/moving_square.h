#ifndef DITSERVE_TESTS_UNIT_VIDEO_MOVING_SQUARE_H_
#define DITSERVE_TESTS_UNIT_VIDEO_MOVING_SQUARE_H_

#include <cstdint>
#include <string>

namespace ditserve::video {

// The encoder tests' input: RGB8 frames [frames, height, width, 3] of colour
// gradients with a red square that moves each frame, so smooth areas, edges
// and motion to code. The square's sides and corners are even, so that its
// colour edges fall between 4:2:0's 2x2 chroma blocks; otherwise chroma
// subsampling alone costs this tiny picture some 6 dB.
std::string MovingSquare(int frames, int height, int width);

// `rgb`'s bytes as the encoders take them.
inline const uint8_t* Pixels(const std::string& rgb) {
  return reinterpret_cast<const uint8_t*>(rgb.data());
}

}  // namespace ditserve::video

#endif  // DITSERVE_TESTS_UNIT_VIDEO_MOVING_SQUARE_H_
