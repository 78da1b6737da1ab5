"""The edge bundle format: reading and checking (format), writing (writer), test vectors (vectors), signatures
(signing) and key files (keys).

This package reads and writes files only: it compiles and loads nothing. A backend turns a plan into a bundle's
members (`artifacts`, `build`) and a bundle back into something that runs (`load`); see burnedge.backends.
"""

from .format import (
    FORMAT,
    FORMAT_VERSION,
    MANIFEST,
    MEMBER_NAME,
    SUFFIX,
    Bundle,
    BundleError,
    is_bundle,
    looks_like,
    read,
)
from .signer import sign
from .signing import SIGNATURE, Trust, TrustSpec, UntrustedBundleError, UntrustedBundleWarning
from .vectors import decode_npz, encode_npz, example_inputs
from .writer import check_destination, dumps, write

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "MANIFEST",
    "MEMBER_NAME",
    "SIGNATURE",
    "SUFFIX",
    "Bundle",
    "BundleError",
    "Trust",
    "TrustSpec",
    "UntrustedBundleError",
    "UntrustedBundleWarning",
    "check_destination",
    "decode_npz",
    "dumps",
    "encode_npz",
    "example_inputs",
    "is_bundle",
    "looks_like",
    "read",
    "sign",
    "write",
]
