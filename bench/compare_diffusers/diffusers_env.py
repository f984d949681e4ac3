"""diffusers v0.38.0 from its source release on Debian's python3-torch 1.13,
as the golden data was made (shared/golden/README.md), or on a PyTorch 2.x
environment (a GPU machine's): the scripts of this folder import it through
import_diffusers()."""

import io
import os
import subprocess
import sys
import tarfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
DIFFUSERS_TAG = "v0.38.0"
HUB_TAG = "v0.36.2"  # the huggingface_hub the golden data was made with
MIRROR = Path("/work/.mirror")
# What diffusers and huggingface_hub import, by Debian package.
DEBIAN_PACKAGES = {"torch": "python3-torch", "numpy": "python3-numpy", "PIL": "python3-pil",
                   "filelock": "python3-filelock", "fsspec": "python3-fsspec",
                   "packaging": "python3-packaging", "tqdm": "python3-tqdm",
                   "regex": "python3-regex", "httpx": "python3-httpx", "yaml": "python3-yaml",
                   "requests": "python3-requests"}


def add_source_arguments(parser):
    parser.add_argument("--diffusers-git", type=Path,
                        default=os.environ.get("DIFFUSERS_GIT",
                                               MIRROR / "huggingface+diffusers/repo"))
    parser.add_argument("--hub-git", type=Path,
                        default=os.environ.get("HUGGINGFACE_HUB_GIT",
                                               MIRROR / "huggingface+huggingface_hub/repo"))


def check_packages():
    import importlib.util
    missing = [package for module, package in DEBIAN_PACKAGES.items()
               if importlib.util.find_spec(module) is None]
    if missing:
        sys.exit(f"{Path(sys.argv[0]).name}: run apt-get install -y {' '.join(missing)}")


def extract(git_dir, tag, into):
    """The package folder `src/` of `tag`, extracted once into `into`."""
    if not (into / "src").is_dir():
        if not Path(git_dir).exists():
            sys.exit(f"{Path(sys.argv[0]).name}: no git repository at {git_dir} (see --help)")
        into.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", f"--git-dir={git_dir}", "archive", tag, "src"],
                                 check=True, capture_output=True).stdout
        partial = into / "src.partial"
        tarfile.open(fileobj=io.BytesIO(archive)).extractall(partial)
        (partial / "src").rename(into / "src")
        partial.rmdir()
    return into / "src"


def import_diffusers(args, work):
    """Makes `import diffusers` load the source release, extracted under
    `work`. Where the environment has huggingface_hub, transformers or
    safetensors (PyTorch 2.x machines), diffusers uses those; elsewhere the
    hub release and the stand-ins of site/. On torch 1.13 the shims of
    torch_shims.py are installed."""
    import importlib.util
    check_packages()
    paths = [str(extract(args.diffusers_git, DIFFUSERS_TAG, work / "diffusers"))]
    if importlib.util.find_spec("huggingface_hub") is None:
        paths.append(str(extract(args.hub_git, HUB_TAG, work / "huggingface_hub")))
    sys.path[:0] = [*paths, str(HERE)]
    # Last, so that only what the environment lacks comes from the stand-ins.
    sys.path.append(str(HERE / "site"))
    os.environ["HF_HUB_OFFLINE"] = "1"
    import torch
    if int(torch.__version__.split(".")[0]) < 2:
        import torch_shims
        torch_shims.install()
    from diffusers.utils import logging
    logging.set_verbosity_error()
