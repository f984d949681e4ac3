"""Python client of ditserve's gRPC API (ditserve.v1.Generation, health)."""

import pkgutil

# The generated stubs (ditserve/v1, ditserve/grpc_health) are not in this
# folder but in another folder on sys.path (build/python, see README.md);
# extending __path__ makes them subpackages of this package.
__path__ = pkgutil.extend_path(__path__, __name__)

from ditserve.client import Client  # noqa: E402
from ditserve.errors import DitserveError  # noqa: E402
from ditserve.outputs import save_outputs  # noqa: E402

__all__ = ["Client", "DitserveError", "save_outputs"]
