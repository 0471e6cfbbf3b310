"""One identity per physical GPU, the same in every backend.

Each backend's probe worker lists the devices it sees, with whatever identity its API gives:
CUDA, torch and Triton a UUID and a PCI address, OpenCL on NVIDIA a PCI address
(cl_nv_device_attribute_query), WebGPU the Vulkan device UUID and PCI address (``backends.vkid``;
on NVIDIA the Vulkan UUID is the CUDA one). ``unify`` joins the records of all backends into
physical GPUs — records that share a UUID or a PCI address are one card — and gives each card one
results slug, its model slug and its ordinal:

- slug: the model (``nvidia-h200``) when the host has one card of that model, so a one-GPU
  host's history continues; with several, the model plus the card's PCI address
  (``nvidia-h200-19-00-0``: stable across runs, unlike an enumeration index);
- ordinal: ``gpu0``, ``gpu1``, … in CUDA's order (the CUDA-family backends' indices) where one
  of them sees the card, then by PCI address;
- a record with neither UUID nor PCI address (a WebGPU adapter whose Vulkan identity could not
  be read) joins the card of its name when the host has exactly one; with several it cannot be
  attributed: slug ``<model>-unattributed``, no ordinal, the reason in ``attribution``. Such
  rows are kept out of per-GPU figures and run after the per-card threads (they share a card
  with one of them).
"""

from __future__ import annotations

from typing import Any

from backends.base import canonical_pci, gpu_slug, slugify

#: the backends that enumerate GPUs in CUDA's order
CUDA_FAMILY = ("cuda", "torch", "triton")
UNATTRIBUTED = "unattributed"


def canonical_uuid(uuid: str | None) -> str | None:
    """A GPU UUID as 32 lowercase hex digits: NVML's "GPU-b90d744f-a88e-…", CUDA's raw bytes as
    hex and Vulkan's deviceUUID all name one card the same way."""
    if not uuid:
        return None
    h = str(uuid).strip().lower().removeprefix("gpu-").replace("-", "")
    return h if len(h) == 32 and all(c in "0123456789abcdef" for c in h) else None


def unify(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Set ``slug``, ``model``, ``ordinal`` and ``attribution`` on every usable GPU record (dicts
    with backend, index, name, kind, pci_bus_id, uuid, reason), in place; returns the physical
    GPUs as ``{"slug", "model", "ordinal", "uuid", "pci_bus_id", "records"}`` in ordinal order."""
    gpus = [r for r in records if r["kind"] == "gpu" and r.get("reason") is None]
    parent: dict[int, int] = {}

    def find(i: int) -> int:
        while parent.setdefault(i, i) != i:
            i = parent[i]
        return i

    owner: dict[tuple[str, str], int] = {}  # ("uuid"|"pci", value) → the first record holding it
    keyed = []
    for i, r in enumerate(gpus):
        keys = [(k, v) for k, v in (("uuid", canonical_uuid(r.get("uuid"))),
                                    ("pci", canonical_pci(r.get("pci_bus_id")))) if v]
        for key in keys:
            parent[find(i)] = find(owner.setdefault(key, i))
        if keys:
            keyed.append(i)
    groups: dict[int, list[int]] = {}
    for i in keyed:
        groups.setdefault(find(i), []).append(i)
    cards = [[gpus[i] for i in members] for members in groups.values()]

    # records without an identity: attributable only by a name that one card alone carries
    for r in [r for i, r in enumerate(gpus) if i not in keyed]:
        named = [c for c in cards if any(x["name"] == r["name"] for x in c)]
        if len(named) == 1:
            named[0].append(r)
        elif not named and sum(x["name"] == r["name"] and x["backend"] == r["backend"] for x in gpus) == 1:
            cards.append([r])  # the host's only card of that name (as far as any backend tells)
        else:
            r.update(slug=f"{slugify(r['name'])}-{UNATTRIBUTED}", model=slugify(r["name"]), ordinal=None,
                     attribution=f"{r['backend']} gives no UUID or PCI address for {r['name']!r} and "
                                 f"the host has {max(len(named), 2)} cards of that name: rows cannot "
                                 "be attributed to one of them")

    def first(card, key, canon):
        return next((v for v in (canon(x.get(key)) for x in card) if v), None)

    def order(card):
        cuda = [x["index"] for x in card if x["backend"] in CUDA_FAMILY]
        return (min(cuda) if cuda else float("inf"), first(card, "pci_bus_id", canonical_pci) or "~")

    out = []
    cards.sort(key=order)
    models = [slugify(c[0]["name"]) for c in cards]
    for n, (card, model) in enumerate(zip(cards, models, strict=True)):
        pci, uuid = first(card, "pci_bus_id", canonical_pci), first(card, "uuid", canonical_uuid)
        slug = gpu_slug(card[0]["name"], pci, models.count(model) == 1)
        if slug == model and models.count(model) > 1:  # several of a model, this one without PCI id
            slug = f"{model}-{uuid[:8]}" if uuid else f"{model}-{n}"
        for r in card:
            r.update(slug=slug, model=model, ordinal=f"gpu{n}", attribution=None)
        out.append({"slug": slug, "model": model, "ordinal": f"gpu{n}", "uuid": uuid, "pci_bus_id": pci,
                    "records": card})
    return out
