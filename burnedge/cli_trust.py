"""The trust commands of the CLI (keygen, sign, trust) and the --trust / --trust-any options: parsing and printing
only (burnedge.bundle.keys and burnedge.bundle.signing do the work)."""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from pathlib import Path
from typing import Any

from .bundle import keys, signing
from .bundle.signing import UntrustedBundleWarning
from .cli_inputs import UsageError

__all__ = ["add_commands", "add_sign_option", "add_trust_options", "trust_of"]


def add_trust_options(s: argparse.ArgumentParser) -> None:
    """--trust KEY.pub (repeatable) and --trust-any, for the commands that open a bundle."""
    s.add_argument(
        "--trust",
        action="append",
        default=[],
        type=Path,
        metavar="KEY.pub",
        help="also trust bundles signed by this public key (besides this machine's key and $BURNEDGE_HOME/trusted)",
    )
    s.add_argument(
        "--trust-any",
        action="store_true",
        help="run the bundle even if no trusted key signed it (its native code runs with your rights)",
    )


def _say(message: Warning | str, category: type[Warning], *args: Any, **kwargs: Any) -> None:
    print(f"burnedge: warning: {message}", file=sys.stderr)


def trust_of(a: argparse.Namespace) -> signing.TrustSpec:
    """What the options say to trust: "any" (--trust-any, whose warning is printed as the CLI's), else the keys."""
    if getattr(a, "trust_any", False):
        if a.trust:
            raise UsageError("--trust-any trusts every key; give it without --trust")
        warnings.simplefilter("always", UntrustedBundleWarning)
        warnings.showwarning = _say
        return signing.ANY
    return list(getattr(a, "trust", []) or []) or None


def add_sign_option(s: argparse.ArgumentParser) -> None:
    s.add_argument(
        "--sign", type=Path, metavar="KEYFILE", help="sign the bundle with this key (default: this machine's own)"
    )


def cmd_keygen(a: argparse.Namespace) -> int:
    key = keys.keygen(a.keyfile)
    pub = keys.public_path(a.keyfile)
    print(f"wrote      {a.keyfile} (the private key, mode 0600: keep it secret; it signs bundles)")
    print(f"wrote      {pub} (the public key: give it to whoever should trust your bundles)")
    print(f"key id     {keys.key_id(key)}")
    print(f"sign with  burnedge sign BUNDLE --key {a.keyfile}   (or: burnedge export ... --sign {a.keyfile})")
    print(f"trust with burnedge trust {pub}   (or: --trust {pub}, Session(path, trust=[{str(pub)!r}]))")
    return 0


def cmd_sign(a: argparse.Namespace) -> int:
    from .bundle import sign

    trust = sign(a.bundle, keys.load_private(a.key))
    print(f"signed     {a.bundle}: {trust.why if trust.trusted else trust.why.replace('it is signed', 'signed')}")
    return 0


def cmd_trust(a: argparse.Namespace) -> int:
    placed = keys.trust_key(a.public_key)
    print(f"trusted    key {placed.stem}: bundles it signs run here ({placed})")
    return 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    """Registers `keygen`, `sign` and `trust` on the CLI's subparsers."""
    s = sub.add_parser("keygen", help="make an Ed25519 signing key: KEYFILE (private, 0600) and KEYFILE.pub")
    s.add_argument("keyfile", type=Path, metavar="KEYFILE")
    s.set_defaults(fn=cmd_keygen)

    s = sub.add_parser("sign", help="sign a bundle with your key (it then runs wherever that key is trusted)")
    s.add_argument("bundle", type=Path)
    s.add_argument("--key", type=Path, required=True, metavar="KEYFILE", help="the private key (burnedge keygen)")
    s.set_defaults(fn=cmd_sign)

    home = os.path.join("$BURNEDGE_HOME", keys.TRUSTED)
    s = sub.add_parser("trust", help=f"trust a public key from now on (copies it into {home})")
    s.add_argument("public_key", type=Path, metavar="KEY.pub")
    s.set_defaults(fn=cmd_trust)
