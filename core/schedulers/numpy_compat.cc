#include "core/schedulers/numpy_compat.h"

#include <cmath>

namespace ditserve::schedulers {

std::vector<double> Linspace(double start, double stop, int64_t num) {
  std::vector<double> values;
  if (num <= 0) return values;
  values.reserve(num);
  if (num == 1) {
    values.push_back(start);
    return values;
  }
  const double div = static_cast<double>(num - 1);
  const double delta = stop - start;
  const double step = delta / div;
  for (int64_t i = 0; i < num; ++i) {
    // numpy falls back to scaling by delta when the step underflows to 0.
    const double offset = step == 0.0 ? (static_cast<double>(i) / div) * delta
                                      : static_cast<double>(i) * step;
    values.push_back(offset + start);
  }
  values.back() = stop;
  return values;
}

std::vector<double> Arange(double start, double stop, double step) {
  std::vector<double> values;
  const double length = std::ceil((stop - start) / step);
  if (!(length > 0)) return values;
  const double delta = (start + step) - start;
  values.reserve(static_cast<size_t>(length));
  for (int64_t i = 0; i < static_cast<int64_t>(length); ++i) {
    values.push_back(start + static_cast<double>(i) * delta);
  }
  return values;
}

double RoundHalfToEven(double value) {
  // std::round sends halves away from zero; they go to the even neighbour
  // here, independent of the floating-point rounding mode.
  if (std::fabs(value - std::trunc(value)) == 0.5) {
    return 2.0 * std::round(value / 2.0);
  }
  return std::round(value);
}

}  // namespace ditserve::schedulers
