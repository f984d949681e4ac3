// ditserve-make-checkpoint: writes a randomly initialised diffusers-layout
// checkpoint folder.
//
//   ditserve-make-checkpoint --family flux-dev --preset tiny --seed 0 \
//       --out /tmp/flux-dev-tiny
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/config/model_defaults.h"
#include "core/engine/family_registry.h"
#include "core/engine/write_checkpoint.h"

ABSL_FLAG(std::string, family, "",
          "served model name (flux-dev, pixart-sigma, ...; the usage message "
          "lists every one)");
ABSL_FLAG(std::string, preset, "", "size preset: tiny or small");
ABSL_FLAG(uint64_t, seed, 0, "seed of the random weights");
ABSL_FLAG(std::string, out, "", "output folder (created if needed)");

int main(int argc, char** argv) {
  std::vector<std::string> models;
  for (const ditserve::config::ModelDefaults& row :
       ditserve::engine::ServedModels()) {
    models.emplace_back(row.name);
  }
  absl::SetProgramUsageMessage(absl::StrCat(
      "writes a random diffusers-layout checkpoint: --family ",
      absl::StrJoin(models, "|"), " --preset tiny|small --seed N --out DIR"));
  absl::ParseCommandLine(argc, argv);
  const std::string out = absl::GetFlag(FLAGS_out);
  if (out.empty()) {
    std::cerr << "--out is required\n";
    return 2;
  }
  const std::string model = absl::GetFlag(FLAGS_family);
  if (absl::Status served = ditserve::engine::FamilyFor(model).status();
      !served.ok()) {
    std::cerr << "--family: " << served.message() << "\n";
    return 2;
  }
  absl::StatusOr<ditserve::checkpoints::CheckpointPreset> preset =
      ditserve::checkpoints::ParseCheckpointPreset(absl::GetFlag(FLAGS_preset));
  if (!preset.ok()) {
    std::cerr << "--preset: " << preset.status().message() << "\n";
    return 2;
  }
  const absl::Status status = ditserve::engine::WriteCheckpoint(
      model, *preset, absl::GetFlag(FLAGS_seed), out);
  if (!status.ok()) {
    std::cerr << status << "\n";
    return 1;
  }
  std::cout << "wrote " << out << "\n";
  return 0;
}
