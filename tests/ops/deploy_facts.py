"""What the deploy checks in tests/ops compare the deploy files against: the
flags a ditserve binary accepts, the rule its parallel degrees must meet,
the image tag a Dockerfile's documented build command gives, and the
project's version."""
import pathlib
import re
import subprocess

DEGREES = ("dp_degree", "cfg_degree", "pipefusion_degree", "ring_degree",
           "ulysses_degree")
# Flags every rank of a group must be given alike: the model and the mesh
# each rank builds from its own flags, and the collective timeout, which
# --helpfull says must be the same on every rank.
SAME_ON_EVERY_RANK = ("model_dir", "model_cache_dir", "num_pipeline_patch",
                      "warmup_steps", "collective_timeout_s", "device",
                      "dtype") + DEGREES


def known_flags(binary):
    """The flag names `binary --helpfull` lists (absl exits 1 after help):
    its lines "    --name (", not the wrapped descriptions, indented
    further, that name other flags."""
    out = subprocess.run([binary, "--helpfull"], capture_output=True,
                         text=True, check=False).stdout
    names = set(re.findall(r"^ {4}--([A-Za-z0-9_]+) \(", out, re.M))
    if "model_dir" not in names:
        raise SystemExit(f"{binary} --helpfull lists no --model_dir; "
                         "is it a ditserve binary?")
    return names


def parse_flags(args, where):
    """{name: value} of --name=value arguments, and problems for the rest:
    the checks read values, so the ambiguous `--name value` is refused."""
    flags, problems = {}, []
    for arg in args:
        match = re.fullmatch(r"--([A-Za-z0-9_]+)=(.*)", arg)
        if not match:
            problems.append(f"{where}: argument {arg!r} is not --name=value")
        elif match.group(1) in flags:
            problems.append(f"{where}: --{match.group(1)} is given twice")
        else:
            flags[match.group(1)] = match.group(2)
    return flags, problems


def unknown_flag_problems(flags, accepted, where):
    return [f"{where}: --{name} is not a flag of the binary"
            for name in sorted(set(flags) - accepted)]


def degree_problems(flags, world_size, where):
    """The rule of config::MakeParallelConfig: dp × cfg × pipefusion × ring ×
    ulysses equals the world size, where an omitted --dp_degree is world
    size / the product of the others, so that product must divide it."""
    degrees = {}
    for name in DEGREES:
        text = flags.get(name, "1")
        if not re.fullmatch(r"[1-9][0-9]*", text):
            return [f"{where}: --{name}={text} is not a positive integer"]
        degrees[name] = int(text)
    model_ranks = 1
    for name in DEGREES[1:]:
        model_ranks *= degrees[name]
    described = " × ".join(f"{n.removesuffix('_degree')} {degrees[n]}"
                           for n in DEGREES[1:])
    if "dp_degree" in flags:
        if degrees["dp_degree"] * model_ranks != world_size:
            return [f"{where}: dp {degrees['dp_degree']} × {described} = "
                    f"{degrees['dp_degree'] * model_ranks} ≠ group size "
                    f"{world_size}"]
    elif world_size % model_ranks != 0:
        return [f"{where}: group size {world_size} is not a multiple of "
                f"{described} = {model_ranks}"]
    return []


def documented_build(dockerfile_text):
    """(FILE, TAG) of the `docker build -f FILE -t TAG .` command a
    Dockerfile's header documents, or None."""
    match = re.search(r"^#\s+docker build -f (\S+) -t (\S+) \.$",
                      dockerfile_text, re.M)
    return match.groups() if match else None


def project_version(root):
    text = (pathlib.Path(root) / "CMakeLists.txt").read_text()
    return re.search(r"project\(ditserve VERSION (\S+)", text).group(1)
