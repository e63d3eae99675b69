"""Container images without podman: the engine probe, the layers, and the umoci fallback.

The image's layers are the data of the debs dataset's packages (`dpkg-deb
--fsys-tarfile`, one uncompressed layer per package), built untimed in the
scratch directory; podman loads them as a docker-archive, umoci unpacks them
from an OCI layout (written here by hand: the blobs, their config, manifest
and index, so nothing is recompressed). Where podman cannot run (not on PATH,
or `podman --version` fails), Debian's umoci is the engine: `umoci unpack` of
the layout into a bundle on the test filesystem stands for `podman load`, a
plain overlayfs mount over the bundle's rootfs (upper and work directories on
the test filesystem) for the container, and deleting it all for `podman rm`
and `rmi`. Each run records which engine ran as a check ("container engine"),
and the reports say it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from fsarena.measure.collect import Command
from fsarena.tasks.base import Check, HostFault, TaskContext

DATASET = "debs"
STORE = "containers"
TAG = "1"
ENGINE_CHECK = "container engine"

# What is printed when podman is missing or broken: the reason, on stdout; nothing if it runs.
_PODMAN_PROBE = (
    'command -v podman >/dev/null || { echo "podman not found on PATH"; exit 0; }; '
    'out=$(podman --version 2>&1) || echo "podman --version failed: $(echo "$out" | tail -n 1)"'
)


@dataclass(frozen=True)
class Engine:
    """Which container engine runs here, and why podman does not when it is umoci."""

    name: str  # "podman" or "umoci"
    why: str = ""  # why podman cannot run ("" for podman)

    def check(self) -> Check:
        detail = "podman (overlay storage driver)"
        if self.name == "umoci":
            detail = f"umoci unpack and an overlayfs mount (podman not available: {self.why})"
        return Check(ENGINE_CHECK, True, detail)


def engine(ctx: TaskContext) -> Engine:
    """podman where it runs, else umoci (a host fault when neither can)."""
    why = ctx.executor.output(("sh", "-c", _PODMAN_PROBE)).strip()
    if not why:
        return Engine("podman")
    if ctx.executor.output(("sh", "-c", "command -v umoci || true")).strip():
        return Engine("umoci", why)
    raise HostFault(
        "missing-tool",
        f"{why}, and umoci (the fallback) is not found on PATH",
        "install umoci (./scripts/setup.sh installs it)",
    )


def build_layers(ctx: TaskContext, folder: str) -> list[tuple[str, str]]:
    """One uncompressed layer tar per package in folder: (file name, sha256 hex) each."""
    debs = ctx.dataset(DATASET)
    layers = []
    for i, f in enumerate(debs.manifest.files):
        layer = f"layer{i:02}.tar"
        script = 'dpkg-deb --fsys-tarfile "$1" > "$2"'
        ctx.executor.call(("sh", "-c", script, "sh", f"{debs.root}/{f.path}", f"{folder}/{layer}"))
        layers.append((layer, ctx.executor.output(("sha256sum", f"{folder}/{layer}")).split()[0]))
    return layers


def image_config(diff_ids: list[str]) -> bytes:
    config = {
        "architecture": "amd64",
        "os": "linux",
        "config": {"Cmd": ["/bin/true"]},
        "rootfs": {"type": "layers", "diff_ids": diff_ids},
    }
    return json.dumps(config).encode()


def layout(ctx: TaskContext) -> str:
    """The OCI layout, built untimed in scratch from the packages' layers (once per dataset)."""
    folder = f"{ctx.scratch}/oci-{ctx.dataset(DATASET).manifest.digest()[:16]}"
    if ctx.executor.exists(f"{folder}/index.json"):
        return folder
    ctx.executor.remove_path(folder)
    blobs = f"{folder}/blobs/sha256"
    ctx.executor.make_dir(blobs)
    digests = []
    for name, digest in build_layers(ctx, folder):
        ctx.executor.call(("mv", f"{folder}/{name}", f"{blobs}/{digest}"))
        digests.append(digest)
    layers = [_descriptor(ctx, blobs, d, "image.layer.v1.tar") for d in digests]
    config = _blob(ctx, blobs, image_config([f"sha256:{d}" for d in digests]))
    manifest = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": _descriptor(ctx, blobs, config, "image.config.v1+json"),
        "layers": layers,
    }
    top = _descriptor(ctx, blobs, _blob(ctx, blobs, json.dumps(manifest).encode()), "")
    top["annotations"] = {"org.opencontainers.image.ref.name": TAG}
    index = {"schemaVersion": 2, "manifests": [top]}
    ctx.executor.write_file(f"{folder}/oci-layout", b'{"imageLayoutVersion": "1.0.0"}')
    ctx.executor.write_file(f"{folder}/index.json", json.dumps(index).encode())
    return folder


def _blob(ctx: TaskContext, blobs: str, data: bytes) -> str:
    import hashlib

    digest = hashlib.sha256(data).hexdigest()
    ctx.executor.write_file(f"{blobs}/{digest}", data)
    return digest


def _descriptor(ctx: TaskContext, blobs: str, digest: str, kind: str) -> dict[str, object]:
    size = int(ctx.executor.output(("stat", "-c", "%s", f"{blobs}/{digest}")).strip())
    media = f"application/vnd.oci.{kind}" if kind else "application/vnd.oci.image.manifest.v1+json"
    return {"mediaType": media, "digest": f"sha256:{digest}", "size": size}


# ---------------------------------------------------------------- the umoci engine's steps


def image_store(ctx: TaskContext, *parts: str) -> str:
    """A path in the container image store on the test filesystem (podman's word, not the
    results store)."""
    return ctx.path(STORE, *parts)


def load_commands(ctx: TaskContext, source: str) -> list[Command]:
    """The layout copied into the store, then unpacked into a bundle there: podman load's work."""
    return [
        Command(("mkdir", "-p", image_store(ctx))),
        Command(("cp", "-r", source, image_store(ctx, "layout"))),
        Command(
            (
                "umoci",
                "unpack",
                "--image",
                f"{image_store(ctx, 'layout')}:{TAG}",
                image_store(ctx, "bundle"),
            )
        ),
    ]


def fresh_store(ctx: TaskContext) -> None:
    """An empty store directory on the test filesystem, before the timed load."""
    ctx.executor.remove_path(image_store(ctx))
    ctx.executor.make_dir(image_store(ctx))


def loaded(ctx: TaskContext) -> list[str]:
    """The tags in the store's layout whose bundle is unpacked (the image, once loaded)."""
    if not ctx.executor.exists(image_store(ctx, "bundle", "rootfs")):
        return []
    return ctx.executor.output(("umoci", "ls", "--layout", image_store(ctx, "layout"))).split()


def ensure_loaded(ctx: TaskContext) -> None:
    if not loaded(ctx):
        fresh_store(ctx)
        for command in load_commands(ctx, layout(ctx)):
            ctx.executor.call(command.argv)


def mount_container(ctx: TaskContext) -> str:
    """An overlayfs over the bundle's rootfs, upper and work on the test filesystem: merged dir."""
    unmount(ctx)
    ctx.executor.remove_path(image_store(ctx, "upper"))
    ctx.executor.remove_path(image_store(ctx, "work"))
    for d in ("upper", "work", "merged"):
        ctx.executor.make_dir(image_store(ctx, d))
    lower, upper, work = (image_store(ctx, d) for d in ("bundle/rootfs", "upper", "work"))
    options = f"lowerdir={lower},upperdir={upper},workdir={work}"
    ctx.executor.call(
        ("mount", "-t", "overlay", "overlay", "-o", options, image_store(ctx, "merged"))
    )
    return image_store(ctx, "merged")


def copied_up(ctx: TaskContext) -> set[str]:
    """Files in the container's upper directory, as paths inside the container."""
    upper = image_store(ctx, "upper")
    found = ctx.executor.output(("find", upper, "-type", "f")).splitlines()
    return {p.removeprefix(upper) for p in found}


def unmount(ctx: TaskContext) -> None:
    merged = image_store(ctx, "merged")
    script = 'if mountpoint -q "$1"; then umount "$1"; fi'
    if ctx.executor.exists(merged):
        ctx.executor.call(("sh", "-c", script, "sh", merged))


def remove_commands(ctx: TaskContext) -> list[Command]:
    """The container's layers, the bundle and the image deleted: podman rm and rmi's work."""
    return [
        Command(("rm", "-rf", image_store(ctx, d))) for d in ("upper", "work", "bundle", "layout")
    ]


def left(ctx: TaskContext) -> list[str]:
    """What is still in the store after removal (the empty merged mount point aside)."""
    if not ctx.executor.exists(image_store(ctx)):
        return []
    names = ctx.executor.output(("ls", "-A", image_store(ctx))).split()
    return [n for n in names if n != "merged"]
