"""The voice gateway's DAVE part: the MLS external sender and delivery service of one channel.

Discord has required DAVE (end-to-end encrypted voice, MLS RFC 9420 with ciphersuite 2) since
2026-03-02, so a fake voice gateway must play the part Discord's plays, or every voice test runs
on a Discord that no longer exists. This module is that part as a state machine without sockets:
the voice websocket hands it what a client sent (`handle_binary`, `handle_json`, `connect`,
`disconnect`) and sends what it returns (`Outgoing`: a binary message, opcode and payload, to
which the socket adds its sequence number with `server_frame`, or a JSON payload to which it
adds `seq`). It is written from protocol.md of discord/dave-protocol and checked against davey
(the client side discord.py uses); /work/shared/notes/dave-offline.md lists where protocol.md
alone misleads.

What it does, as Discord's voice gateway does:
- sends its external sender package (25) to each client: its P-256 key and basic credential;
- turns each member's key package (26) into an external Add proposal (27), signed by itself
  (sender type external, index 0, no GroupContext, no membership tag), and a member who leaves
  into a Remove proposal; revokes the proposals of a member who leaves before being welcomed;
- takes the first valid commit of each epoch (28), refuses stale and incomplete ones, and relays
  it (29) with a transition id, to the committer only at a group's creation, and the welcome
  (30) to each new member, cut to that member's secrets;
- counts the transition's readiness (23) and executes it (22); answers 31 by removing the
  member who could not process a commit or welcome and adding it again from its new key package;
- resets a group left with one member (24 with epoch 1, 21 with transition 0).

`DaveClient` is the other side, davey driven as discord.py 2.7.1 drives it: the members of the
in-process proof (test_dave.py), and the fake's listeners once it is wired in.
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass, field
from typing import Any, Literal

import davey
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

JSON = dict[str, Any]
Message = bytes | JSON  # a binary message (opcode, payload) or a JSON payload

# Voice gateway opcodes (protocol.md, "Voice Gateway Opcodes")
PREPARE_TRANSITION = 21
EXECUTE_TRANSITION = 22
TRANSITION_READY = 23
PREPARE_EPOCH = 24
EXTERNAL_SENDER = 25
KEY_PACKAGE = 26
PROPOSALS = 27
COMMIT_WELCOME = 28
ANNOUNCE_COMMIT = 29
WELCOME = 30
INVALID_COMMIT_WELCOME = 31
APPEND, REVOKE = 0, 1  # the operation type of 27
# How long the gateway waits for every member's 23 before it executes a transition anyway:
# protocol.md puts the gateway's timeout and the latency together at "roughly two seconds".
TRANSITION_TIMEOUT = 2.0

DAVE_PROTOCOL_VERSION = 1
# RFC 9420 code points
MLS10 = 1
CIPHERSUITE = 2  # MLS_128_DHKEMP256_AES128GCM_SHA256_P256, DAVE protocol version 1's
WIRE_PUBLIC_MESSAGE = 1
SENDER_MEMBER, SENDER_EXTERNAL = 1, 2
CONTENT_PROPOSAL, CONTENT_COMMIT = 2, 3
PROPOSAL_ADD, PROPOSAL_UPDATE, PROPOSAL_REMOVE = 1, 2, 3
CREDENTIAL_BASIC = 1
LEAF_KEY_PACKAGE, LEAF_UPDATE, LEAF_COMMIT = 1, 2, 3
PROPOSAL_OR_REF_PROPOSAL, PROPOSAL_OR_REF_REFERENCE = 1, 2
FULL_LIFETIME = (0, 2**64 - 1)  # protocol.md: the gateway requires key packages to say so

PROPOSAL_REF_LABEL = b"MLS 1.0 Proposal Reference"
KEY_PACKAGE_REF_LABEL = b"MLS 1.0 KeyPackage Reference"


class MLSDecodeError(ValueError):
    """Bytes that are not the RFC 9420 structure they should be."""


# ---- TLS presentation language (RFC 9420 section 2.1) --------------------------------------------
def varint(n: int) -> bytes:
    """MLS's variable-size length: 1, 2 or 4 bytes, the shortest that holds `n`."""
    if n < 1 << 6:
        return bytes([n])
    if n < 1 << 14:
        return struct.pack(">H", 0x4000 | n)
    if n < 1 << 30:
        return struct.pack(">I", 0x80000000 | n)
    raise ValueError(f"{n} is too long for an MLS vector")


def vec(data: bytes) -> bytes:
    """An opaque<V>: its length as a varint, then the bytes."""
    return varint(len(data)) + data


class Reader:
    """Reads TLS-encoded fields in order; every read past the end raises MLSDecodeError."""

    def __init__(self, data: bytes, position: int = 0) -> None:
        self.data = data
        self.position = position

    def take(self, n: int) -> bytes:
        if self.position + n > len(self.data):
            raise MLSDecodeError(f"{n} bytes wanted at {self.position}, {len(self.data)} in all")
        chunk = self.data[self.position : self.position + n]
        self.position += n
        return chunk

    def u8(self) -> int:
        return self.take(1)[0]

    def u16(self) -> int:
        return int(struct.unpack(">H", self.take(2))[0])

    def u32(self) -> int:
        return int(struct.unpack(">I", self.take(4))[0])

    def u64(self) -> int:
        return int(struct.unpack(">Q", self.take(8))[0])

    def length(self) -> int:
        first = self.u8()
        prefix = first >> 6
        if prefix == 0:
            return first & 0x3F
        if prefix == 1:
            n = ((first & 0x3F) << 8) | self.u8()
            minimum = 1 << 6
        elif prefix == 2:
            n = ((first & 0x3F) << 24) | int.from_bytes(self.take(3), "big")
            minimum = 1 << 14
        else:
            raise MLSDecodeError("a varint with prefix 0b11")
        if n < minimum:  # RFC 9420: the shortest encoding only
            raise MLSDecodeError(f"a varint not minimally encoded ({n})")
        return n

    def vec(self) -> bytes:
        return self.take(self.length())

    def sub(self) -> Reader:
        """A reader over the next vector's contents."""
        return Reader(self.vec())

    @property
    def done(self) -> bool:
        return self.position == len(self.data)

    def rest(self) -> bytes:
        return self.data[self.position :]


# ---- signatures and references -------------------------------------------------------------------
def public_point(key: ec.EllipticCurvePrivateKey) -> bytes:
    """The 65-byte uncompressed point MLS ciphersuite 2 names a signature key by."""
    return key.public_key().public_bytes(
        serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
    )


def sign_content(label: str, content: bytes) -> bytes:
    """What SignWithLabel signs: struct { opaque label<V>; opaque content<V>; }."""
    return vec(b"MLS 1.0 " + label.encode()) + vec(content)


def sign_with_label(key: ec.EllipticCurvePrivateKey, label: str, content: bytes) -> bytes:
    """RFC 9420 SignWithLabel with ECDSA P-256 SHA-256, DER-encoded as openmls reads it."""
    return key.sign(sign_content(label, content), ec.ECDSA(hashes.SHA256()))


def verify_with_label(point: bytes, label: str, content: bytes, signature: bytes) -> bool:
    """RFC 9420 VerifyWithLabel for a 65-byte P-256 point."""
    try:
        public = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), point)
        public.verify(signature, sign_content(label, content), ec.ECDSA(hashes.SHA256()))
    except (InvalidSignature, ValueError):
        return False
    return True


def ref_hash(label: bytes, value: bytes) -> bytes:
    """RFC 9420 RefHash: SHA-256 over struct { opaque label<V>; opaque value<V>; }."""
    return hashlib.sha256(vec(label) + vec(value)).digest()


def proposal_ref(proposal_message: bytes) -> bytes:
    """The ProposalRef of an external proposal (an MLSMessage as `external_proposal` makes it).

    The reference hashes the AuthenticatedContent (wire format, content, signature): for a
    PublicMessage from an external sender, which has no membership tag, that is the MLSMessage
    without its version field.
    """
    return ref_hash(PROPOSAL_REF_LABEL, proposal_message[2:])


def key_package_ref(key_package: bytes) -> bytes:
    """The KeyPackageRef a Welcome names each new member's secrets by."""
    return ref_hash(KEY_PACKAGE_REF_LABEL, key_package)


def user_identity(user_id: int) -> bytes:
    """A member's basic credential identity (and a group id): 8 big-endian bytes."""
    return user_id.to_bytes(8, "big")


# ---- what the gateway writes ---------------------------------------------------------------------
def external_sender_package(point: bytes, identity: bytes) -> bytes:
    """ExternalSender: SignaturePublicKey signature_key; Credential credential (basic)."""
    return vec(point) + struct.pack(">H", CREDENTIAL_BASIC) + vec(identity)


def add_proposal(key_package: bytes) -> bytes:
    """Proposal { add: KeyPackage }."""
    return struct.pack(">H", PROPOSAL_ADD) + key_package


def remove_proposal(leaf_index: int) -> bytes:
    """Proposal { remove: uint32 removed }."""
    return struct.pack(">HI", PROPOSAL_REMOVE, leaf_index)


def external_proposal(
    key: ec.EllipticCurvePrivateKey,
    group_id: bytes,
    epoch: int,
    proposal: bytes,
    sender_index: int = 0,
) -> bytes:
    """An MLSMessage holding a PublicMessage proposal from external sender `sender_index`.

    The signed FramedContentTBS carries no GroupContext for an external sender, and the message
    no membership tag, so one proposal is valid in every member's copy of the group (and in each
    pending member's own group before the first commit).
    """
    content = (
        vec(group_id)
        + struct.pack(">QBI", epoch, SENDER_EXTERNAL, sender_index)
        + vec(b"")  # authenticated_data
        + bytes([CONTENT_PROPOSAL])
        + proposal
    )
    header = struct.pack(">HH", MLS10, WIRE_PUBLIC_MESSAGE)
    signature = sign_with_label(key, "FramedContentTBS", header + content)
    return header + content + vec(signature)


def proposals_payload(operation: int, items: list[bytes]) -> bytes:
    """27's payload: the operation type, then one vector of MLSMessages (append) or of
    ProposalRefs, each an opaque<V> (revoke)."""
    if operation == REVOKE:
        items = [vec(ref) for ref in items]
    return bytes([operation]) + vec(b"".join(items))


def server_frame(seq: int, message: bytes) -> bytes:
    """A binary message as the voice gateway sends it: seq (u16 BE), then opcode and payload."""
    return struct.pack(">H", seq & 0xFFFF) + message


def prepare_transition(transition_id: int, protocol_version: int = DAVE_PROTOCOL_VERSION) -> JSON:
    return {
        "op": PREPARE_TRANSITION,
        "d": {"protocol_version": protocol_version, "transition_id": transition_id},
    }


def execute_transition(transition_id: int) -> JSON:
    return {"op": EXECUTE_TRANSITION, "d": {"transition_id": transition_id}}


def transition_ready(transition_id: int) -> JSON:
    """What a client sends (23), for the tests' stand-ins of clients."""
    return {"op": TRANSITION_READY, "d": {"transition_id": transition_id}}


def prepare_epoch(epoch: int, protocol_version: int = DAVE_PROTOCOL_VERSION) -> JSON:
    return {"op": PREPARE_EPOCH, "d": {"protocol_version": protocol_version, "epoch": epoch}}


def invalid_commit_welcome(transition_id: int) -> JSON:
    """What a client sends (31) when it cannot process a commit or welcome."""
    return {"op": INVALID_COMMIT_WELCOME, "d": {"transition_id": transition_id}}


# ---- what the gateway reads ----------------------------------------------------------------------
@dataclass(frozen=True)
class LeafNode:
    encryption_key: bytes
    signature_key: bytes
    credential_type: int
    identity: bytes  # a basic credential's identity (for another type, its content)
    source: int
    lifetime: tuple[int, int] | None
    tbs: bytes  # the bytes its signature covers (LeafNodeTBS for a key package's leaf)
    signature: bytes

    @classmethod
    def read(cls, r: Reader) -> LeafNode:
        start = r.position
        encryption_key, signature_key = r.vec(), r.vec()
        credential_type, identity = r.u16(), r.vec()
        for _ in range(5):  # Capabilities: versions, cipher suites, extensions, proposals,
            r.vec()  # credentials
        source = r.u8()
        lifetime = None
        if source == LEAF_KEY_PACKAGE:
            lifetime = (r.u64(), r.u64())
        elif source == LEAF_COMMIT:
            r.vec()  # parent_hash
        elif source != LEAF_UPDATE:
            raise MLSDecodeError(f"leaf node source {source}")
        r.vec()  # extensions
        tbs = r.data[start : r.position]
        return cls(
            encryption_key,
            signature_key,
            credential_type,
            identity,
            source,
            lifetime,
            tbs,
            r.vec(),
        )


@dataclass(frozen=True)
class KeyPackage:
    raw: bytes
    version: int
    cipher_suite: int
    leaf: LeafNode
    tbs: bytes
    signature: bytes

    @classmethod
    def read(cls, r: Reader) -> KeyPackage:
        start = r.position
        version, cipher_suite = r.u16(), r.u16()
        r.vec()  # init_key
        leaf = LeafNode.read(r)
        r.vec()  # extensions
        tbs = r.data[start : r.position]
        signature = r.vec()
        return cls(r.data[start : r.position], version, cipher_suite, leaf, tbs, signature)

    @classmethod
    def parse(cls, data: bytes) -> KeyPackage:
        """26's payload: a bare KeyPackage (not an MLSMessage), and nothing after it."""
        r = Reader(data)
        key_package = cls.read(r)
        if not r.done:
            raise MLSDecodeError("bytes after the key package")
        return key_package

    @property
    def user_id(self) -> int:
        return int.from_bytes(self.leaf.identity, "big")

    @property
    def ref(self) -> bytes:
        return key_package_ref(self.raw)

    def problem(self, user_id: int) -> str | None:
        """Why the gateway refuses this key package from `user_id` (protocol.md,
        "Validation"), or None."""
        if (self.version, self.cipher_suite) != (MLS10, CIPHERSUITE):
            return f"version {self.version}, ciphersuite {self.cipher_suite}"
        if self.leaf.credential_type != CREDENTIAL_BASIC:
            return f"credential type {self.leaf.credential_type}"
        if self.leaf.identity != user_identity(user_id):
            return f"identity {self.leaf.identity.hex()} is not user {user_id}'s"
        if self.leaf.lifetime != FULL_LIFETIME:
            return f"lifetime {self.leaf.lifetime}"
        if not verify_with_label(
            self.leaf.signature_key, "LeafNodeTBS", self.leaf.tbs, self.leaf.signature
        ):
            return "the leaf node's signature"
        if not verify_with_label(
            self.leaf.signature_key, "KeyPackageTBS", self.tbs, self.signature
        ):
            return "the key package's signature"
        return None


@dataclass(frozen=True)
class Commit:
    """A commit as 28 carries it: the MLSMessage (kept whole, to relay) and what the gateway
    checks in it."""

    message: bytes
    group_id: bytes
    epoch: int
    sender_type: int
    sender_index: int
    references: list[bytes]
    inline_proposal_types: list[int]
    path_leaf: LeafNode | None

    @classmethod
    def read(cls, r: Reader) -> Commit:
        start = r.position
        version, wire_format = r.u16(), r.u16()
        if (version, wire_format) != (MLS10, WIRE_PUBLIC_MESSAGE):
            raise MLSDecodeError(f"version {version}, wire format {wire_format}: not public")
        group_id, epoch = r.vec(), r.u64()
        sender_type = r.u8()
        sender_index = r.u32() if sender_type in (SENDER_MEMBER, SENDER_EXTERNAL) else 0
        r.vec()  # authenticated_data
        content_type = r.u8()
        if content_type != CONTENT_COMMIT:
            raise MLSDecodeError(f"content type {content_type}, not a commit")
        references: list[bytes] = []
        inline: list[int] = []
        proposals = r.sub()
        while not proposals.done:
            kind = proposals.u8()
            if kind == PROPOSAL_OR_REF_REFERENCE:
                references.append(proposals.vec())
            elif kind == PROPOSAL_OR_REF_PROPOSAL:
                inline.append(read_proposal(proposals))
            else:
                raise MLSDecodeError(f"ProposalOrRef type {kind}")
        path_leaf = None
        if r.u8():  # optional<UpdatePath>
            path_leaf = LeafNode.read(r)
            r.vec()  # nodes
        r.vec()  # signature
        r.vec()  # confirmation_tag
        if sender_type == SENDER_MEMBER:
            r.vec()  # membership_tag
        return cls(
            r.data[start : r.position],
            group_id,
            epoch,
            sender_type,
            sender_index,
            references,
            inline,
            path_leaf,
        )


def read_proposal(r: Reader) -> int:
    """Skips an inline Proposal, returning its type; only those DAVE could carry are read (a
    commit with any inline proposal is refused anyway)."""
    kind = r.u16()
    if kind == PROPOSAL_ADD:
        KeyPackage.read(r)
    elif kind == PROPOSAL_UPDATE:
        LeafNode.read(r)
    elif kind == PROPOSAL_REMOVE:
        r.u32()
    else:
        raise MLSDecodeError(f"inline proposal type {kind}")
    return kind


@dataclass(frozen=True)
class Welcome:
    cipher_suite: int
    secrets: dict[bytes, bytes]  # KeyPackageRef -> the whole EncryptedGroupSecrets entry
    encrypted_group_info: bytes

    @classmethod
    def parse(cls, data: bytes) -> Welcome:
        """A bare Welcome (as 28 carries it after the commit, and 30 relays it)."""
        r = Reader(data)
        cipher_suite = r.u16()
        secrets: dict[bytes, bytes] = {}
        entries = r.sub()
        while not entries.done:
            start = entries.position
            new_member = entries.vec()
            entries.vec()  # kem_output
            entries.vec()  # ciphertext
            secrets[new_member] = entries.data[start : entries.position]
        encrypted_group_info = r.vec()
        if not r.done:
            raise MLSDecodeError("bytes after the welcome")
        return cls(cipher_suite, secrets, encrypted_group_info)

    def for_member(self, ref: bytes) -> bytes:
        """The Welcome cut to one new member's secrets, as 30 carries it (protocol.md)."""
        return (
            struct.pack(">H", self.cipher_suite)
            + vec(self.secrets[ref])
            + vec(self.encrypted_group_info)
        )


def parse_commit_welcome(payload: bytes) -> tuple[Commit, Welcome | None]:
    """28's payload: the commit MLSMessage and, right after it with no length between, a bare
    Welcome when the commit adds members. The commit is read whole to find where it ends."""
    r = Reader(payload)
    commit = Commit.read(r)
    return commit, None if r.done else Welcome.parse(r.rest())


# ---- the state machine ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Outgoing:
    """A message for one client: bytes (opcode and payload, without the seq the socket adds) or
    a JSON payload (without its `seq`)."""

    user_id: int
    message: bytes | JSON

    @property
    def op(self) -> int:
        return self.message[0] if isinstance(self.message, bytes) else int(self.message["op"])


@dataclass
class Proposal:
    """An external proposal in flight in the current epoch."""

    ref: bytes
    message: bytes
    kind: Literal["add", "remove"]
    user_id: int
    key_package: KeyPackage | None = None  # an add's
    leaf: int | None = None  # a remove's
    recipients: set[int] = field(default_factory=set)


class DaveGateway:
    """One voice channel's MLS delivery service and external sender, as Discord runs it.

    The group is "established" once a first commit is relayed; until then every member is
    pending, each has a group of its own at epoch 0, and the add proposals go to the other
    pending members. `refused` records each commit or key package refused, and why.
    """

    def __init__(
        self,
        channel_id: int,
        key: ec.EllipticCurvePrivateKey | None = None,
        identity: bytes = b"fake-voice-gateway",
        protocol_version: int = DAVE_PROTOCOL_VERSION,
    ) -> None:
        self.channel_id = channel_id
        self.group_id = user_identity(channel_id)
        self.key = key or ec.generate_private_key(ec.SECP256R1())
        self.identity = identity
        self.protocol_version = protocol_version
        self.connected: list[int] = []  # users on this channel's DAVE session, in join order
        self.key_packages: dict[int, KeyPackage] = {}  # pending members' (awaiting a welcome)
        self.signature_keys: dict[int, bytes] = {}  # each member's, from its key package
        self.leaves: list[int | None] = []  # the established group's tree: user id per leaf
        self.epoch = 0
        self.groups = 0  # groups established on this channel so far
        self.proposals: dict[bytes, Proposal] = {}  # this epoch's, unrevoked
        self.transitions: dict[int, set[int]] = {}  # id -> users not ready yet
        self.transition_users: dict[int, set[int]] = {}  # id -> users told of it
        self.refused: list[str] = []
        self._last_transition = 0

    # -- views
    @property
    def established(self) -> bool:
        return any(user is not None for user in self.leaves)

    @property
    def members(self) -> dict[int, int]:
        """The established group's members: user id -> leaf index."""
        return {user: leaf for leaf, user in enumerate(self.leaves) if user is not None}

    @property
    def external_sender(self) -> bytes:
        return external_sender_package(public_point(self.key), self.identity)

    def _being_removed(self) -> set[int]:
        return {p.user_id for p in self.proposals.values() if p.kind == "remove"}

    def _committers(self) -> set[int]:
        """Who receives proposals: the established group's connected members but those being
        removed, or (before the first commit) every connected pending member."""
        if not self.established:
            return {u for u in self.key_packages if u in self.connected}
        return set(self.members) & set(self.connected) - self._being_removed()

    # -- what clients send
    def connect(self, user_id: int) -> list[Outgoing]:
        """A client's voice session starts with DAVE (after SESSION_DESCRIPTION): davey makes
        its pending group only when the external sender (25) arrives, so it goes first."""
        out = self.disconnect(user_id) if user_id in self.connected else []
        self.connected.append(user_id)
        return [*out, Outgoing(user_id, bytes([EXTERNAL_SENDER]) + self.external_sender)]

    def handle_binary(self, user_id: int, message: bytes) -> list[Outgoing]:
        """A binary message from a client: opcode, then payload (a client sends no seq)."""
        op, payload = message[0], message[1:]
        if op == KEY_PACKAGE:
            return self.key_package(user_id, payload)
        if op == COMMIT_WELCOME:
            return self.commit_welcome(user_id, payload)
        raise ValueError(f"binary opcode {op} is not a client's")

    def handle_json(self, user_id: int, payload: JSON) -> list[Outgoing]:
        """A DAVE JSON payload from a client (23 or 31); other opcodes are not DAVE's."""
        op, data = payload["op"], payload["d"]
        if op == TRANSITION_READY:
            return self.transition_ready(user_id, int(data["transition_id"]))
        if op == INVALID_COMMIT_WELCOME:
            return self.invalid_commit_welcome(user_id, int(data["transition_id"]))
        return []

    def key_package(self, user_id: int, payload: bytes) -> list[Outgoing]:
        """A pending member's key package (26): validated, then proposed for adding."""
        try:
            key_package = KeyPackage.parse(payload)
        except MLSDecodeError as e:
            self.refused.append(f"key package of {user_id}: {e}")
            return []
        problem = key_package.problem(user_id)
        if problem is not None:
            self.refused.append(f"key package of {user_id}: {problem}")
            return []
        if user_id not in self.connected:
            return []
        # A pending member replaces its key package: its earlier add is revoked.
        out = self._revoke(
            [p for p in self.proposals.values() if p.kind == "add" and p.user_id == user_id]
        )
        if user_id in self.members and user_id not in self._being_removed():
            # A member that lost its state without saying 31: it leaves the group first.
            out += self._propose_remove(user_id)
        self.key_packages[user_id] = key_package
        out += self._propose_add(user_id)
        return out

    def commit_welcome(self, user_id: int, payload: bytes) -> list[Outgoing]:
        """A commit and welcome (28): the first valid one of the epoch is relayed."""
        try:
            commit, welcome = parse_commit_welcome(payload)
        except MLSDecodeError as e:
            self.refused.append(f"commit of {user_id}: {e}")
            return []
        problem = self._commit_problem(user_id, commit, welcome)
        if problem is not None:
            self.refused.append(f"commit of {user_id} at epoch {commit.epoch}: {problem}")
            return []
        return self._apply(user_id, commit, welcome)

    def transition_ready(self, user_id: int, transition_id: int) -> list[Outgoing]:
        """A client is ready (23): once all are, the transition is executed (22)."""
        waiting = self.transitions.get(transition_id)
        if waiting is None:
            return []
        waiting.discard(user_id)
        return self._execute_if_ready(transition_id)

    def expire_transition(self, transition_id: int) -> list[Outgoing]:
        """The wait for a transition's 23s ran out: Discord executes it anyway (protocol.md:
        "after all clients are ready (or after a timeout)"). The socket layer's timer calls
        this, `TRANSITION_TIMEOUT` after the commit it relayed."""
        waiting = self.transitions.get(transition_id)
        if waiting is None:
            return []
        waiting.clear()
        return self._execute_if_ready(transition_id)

    def invalid_commit_welcome(self, user_id: int, transition_id: int) -> list[Outgoing]:
        """A client could not process a commit or welcome (31): it is removed from the group,
        and added again when its new key package comes (discord.py sends it right after)."""
        out: list[Outgoing] = []
        for waiting in self.transitions.values():
            waiting.discard(user_id)
        for tid in list(self.transitions):
            out += self._execute_if_ready(tid)
        if user_id in self.members and user_id not in self._being_removed():
            out += self._propose_remove(user_id)
        return out

    def disconnect(self, user_id: int) -> list[Outgoing]:
        """A client left the channel (its voice websocket closed)."""
        if user_id not in self.connected:
            return []
        self.connected.remove(user_id)
        out = self._revoke(
            [p for p in self.proposals.values() if p.kind == "add" and p.user_id == user_id]
        )
        self.key_packages.pop(user_id, None)
        for p in self.proposals.values():
            p.recipients.discard(user_id)
        for waiting in self.transitions.values():
            waiting.discard(user_id)
        for tid in list(self.transitions):
            out += self._execute_if_ready(tid)
        if user_id in self.members:
            remaining = [u for u in self.members if u != user_id and u in self.connected]
            if len(remaining) <= 1:
                return out + self._reset(remaining)
            if user_id not in self._being_removed():  # (after a 31 it already is)
                out += self._propose_remove(user_id)
        return out

    # -- proposals
    def _send_proposals(self, recipients: set[int], messages: list[bytes]) -> list[Outgoing]:
        payload = bytes([PROPOSALS]) + proposals_payload(APPEND, messages)
        return [Outgoing(user, payload) for user in sorted(recipients)]

    def _propose_add(self, user_id: int) -> list[Outgoing]:
        key_package = self.key_packages[user_id]
        message = external_proposal(
            self.key, self.group_id, self.epoch, add_proposal(key_package.raw)
        )
        proposal = Proposal(proposal_ref(message), message, "add", user_id, key_package)
        out: list[Outgoing] = []
        if not self.established:
            # Before the first commit, every pending member holds a group of its own: it gets
            # the other pending members' adds, and they get its.
            others = [
                p for p in self.proposals.values() if p.kind == "add" and p.user_id != user_id
            ]
            if others:
                for p in others:
                    p.recipients.add(user_id)
                out += self._send_proposals({user_id}, [p.message for p in others])
        proposal.recipients = self._committers() - {user_id}
        self.proposals[proposal.ref] = proposal
        return out + self._send_proposals(proposal.recipients, [message])

    def _propose_remove(self, user_id: int) -> list[Outgoing]:
        leaf = self.members[user_id]
        message = external_proposal(self.key, self.group_id, self.epoch, remove_proposal(leaf))
        proposal = Proposal(proposal_ref(message), message, "remove", user_id, leaf=leaf)
        proposal.recipients = self._committers() - {user_id}
        self.proposals[proposal.ref] = proposal
        return self._send_proposals(proposal.recipients, [message])

    def _revoke(self, proposals: list[Proposal]) -> list[Outgoing]:
        out: list[Outgoing] = []
        by_recipient: dict[int, list[bytes]] = {}
        for p in proposals:
            del self.proposals[p.ref]
            for user in p.recipients:
                by_recipient.setdefault(user, []).append(p.ref)
        for user, refs in sorted(by_recipient.items()):
            out.append(Outgoing(user, bytes([PROPOSALS]) + proposals_payload(REVOKE, refs)))
        return out

    # -- commits
    def _commit_problem(self, user_id: int, commit: Commit, welcome: Welcome | None) -> str | None:
        """Why a commit is not relayed (protocol.md, "Voice Gateway Commit Validity" and
        "Commit Ordering"), or None."""
        if commit.group_id != self.group_id:
            return f"group id {commit.group_id.hex()}"
        if commit.epoch != self.epoch:
            return f"stale: the group is at epoch {self.epoch}"
        if commit.sender_type != SENDER_MEMBER:
            return f"sender type {commit.sender_type}"
        if user_id not in self._committers():
            return "not a committing member"
        if self.established and commit.sender_index != self.members[user_id]:
            return f"sender leaf {commit.sender_index}, not the committer's"
        if commit.inline_proposal_types:
            return f"inline proposals {commit.inline_proposal_types}"
        if not commit.references:
            return "no proposal"
        unknown = [r for r in commit.references if r not in self.proposals]
        if unknown:
            return f"{len(unknown)} proposal(s) not in flight (revoked or of another epoch)"
        expected = {ref for ref, p in self.proposals.items() if user_id in p.recipients}
        if set(commit.references) != expected or len(commit.references) != len(expected):
            return "it does not reference every proposal of the epoch exactly once"
        leaf = commit.path_leaf
        if leaf is not None and (
            leaf.identity != user_identity(user_id)
            or leaf.signature_key != self.signature_keys.get(user_id, self._key_of(user_id))
        ):
            return "its update path changes the committer's credential or key"
        added = [self.proposals[r] for r in commit.references if self.proposals[r].kind == "add"]
        if added:
            if welcome is None:
                return "members added without a welcome"
            missing = [
                p.user_id
                for p in added
                if p.key_package and p.key_package.ref not in welcome.secrets
            ]
            if missing:
                return f"the welcome has no secrets for {missing}"
        return None

    def _key_of(self, user_id: int) -> bytes | None:
        key_package = self.key_packages.get(user_id)
        return key_package.leaf.signature_key if key_package else None

    def _apply(self, user_id: int, commit: Commit, welcome: Welcome | None) -> list[Outgoing]:
        proposals = [self.proposals[r] for r in commit.references]
        creating = not self.established
        if creating:
            # The committer's own group had it alone at leaf 0.
            old_members = {user_id}
            self.leaves = [user_id]
            self.signature_keys[user_id] = self.key_packages.pop(user_id).leaf.signature_key
        else:
            old_members = set(self.members)
        # RFC 9420 12.2: removes first, then adds, each in the commit's order; an add takes the
        # leftmost blank leaf, else a new one; trailing blank leaves are truncated.
        for p in proposals:
            if p.kind == "remove" and p.leaf is not None:
                self.leaves[p.leaf] = None
        added: list[Proposal] = []
        for p in proposals:
            if p.kind == "add" and p.key_package is not None:
                blank = next((i for i, u in enumerate(self.leaves) if u is None), len(self.leaves))
                if blank == len(self.leaves):
                    self.leaves.append(None)
                self.leaves[blank] = p.user_id
                self.signature_keys[p.user_id] = p.key_package.leaf.signature_key
                if self.key_packages.get(p.user_id) is p.key_package:
                    del self.key_packages[p.user_id]
                added.append(p)
        while self.leaves and self.leaves[-1] is None:
            self.leaves.pop()
        self.epoch += 1
        if creating:
            self.groups += 1
        self.proposals.clear()
        transition_id = self._next_transition_id()
        prefix = struct.pack(">H", transition_id)
        announced = (old_members & set(self.members) & set(self.connected)) - {
            p.user_id for p in added
        }
        out = [
            Outgoing(u, bytes([ANNOUNCE_COMMIT]) + prefix + commit.message)
            for u in sorted(announced)
        ]
        welcomed: set[int] = set()
        for p in added:
            if p.user_id in self.connected and p.key_package is not None and welcome is not None:
                out.append(
                    Outgoing(
                        p.user_id,
                        bytes([WELCOME]) + prefix + welcome.for_member(p.key_package.ref),
                    )
                )
                welcomed.add(p.user_id)
        if announced | welcomed:
            self.transitions[transition_id] = announced | welcomed
            self.transition_users[transition_id] = announced | welcomed
        # Pending members this commit did not add (their key package came too late for it,
        # or they are back after a 31) are proposed again in the new epoch.
        for pending in [u for u in self.connected if u in self.key_packages]:
            out += self._propose_add(pending)
        return out

    def _next_transition_id(self) -> int:
        """Transition ids are u16 and never 0 (0 means "execute at once")."""
        self._last_transition = self._last_transition % 0xFFFF + 1
        return self._last_transition

    def _execute_if_ready(self, transition_id: int) -> list[Outgoing]:
        if self.transitions.get(transition_id):
            return []
        self.transitions.pop(transition_id, None)
        users = self.transition_users.pop(transition_id, set())
        # A dict each: the socket adds its own `seq` to what it sends.
        return [
            Outgoing(u, execute_transition(transition_id))
            for u in sorted(users)
            if u in self.connected
        ]

    def _reset(self, remaining: list[int]) -> list[Outgoing]:
        """The group is left with one member (or none): it is dropped, and the sole member told
        to make a new one (24 with epoch 1, then 21 with transition 0, protocol.md "Sole member
        reset"); it sends a new key package, and the next member to join starts a new group."""
        self.leaves = []
        self.epoch = 0
        self.proposals.clear()
        self.signature_keys.clear()
        out: list[Outgoing] = []
        for user in remaining:
            out.append(Outgoing(user, prepare_epoch(1, self.protocol_version)))
            out.append(Outgoing(user, prepare_transition(0, self.protocol_version)))
        # Members still pending (a join in flight) start the new group among themselves.
        for pending in [u for u in self.connected if u in self.key_packages]:
            out += self._propose_add(pending)
        return out


# ---- a client ---------------------------------------------------------------------------------
class DaveClient:
    """A member's side as discord.py 2.7.1 drives davey: gateway.py's `received_message` and
    `received_binary_message`, voice_state.py's `reinit_dave_session`, `_execute_transition`
    and `_recover_from_invalid_commit`, in the same calls and order. The proof's members, and
    the fake's listeners (the humans in the channel, whose `dave` decrypts what the bot sends)."""

    def __init__(self, user_id: int, channel_id: int) -> None:
        self.user_id = user_id
        self.channel_id = channel_id
        self.session: davey.DaveSession | None = None
        self.protocol_version = 0
        self.pending_transitions: dict[int, int] = {}
        self.executed: list[int] = []
        self.failures: list[str] = []  # commits and welcomes it could not process (then 31)
        self.received: list[int] = []  # the opcodes it got, in order

    @property
    def dave(self) -> davey.DaveSession:
        assert self.session is not None
        return self.session

    def session_description(self, dave_protocol_version: int = 1) -> list[Message]:
        """SESSION_DESCRIPTION (op 4): discord.py makes its session and sends a key package."""
        self.protocol_version = dave_protocol_version
        return self._reinit()

    def _reinit(self) -> list[Message]:
        if self.session is not None:
            self.session.reinit(self.protocol_version, self.user_id, self.channel_id)
        else:
            self.session = davey.DaveSession(self.protocol_version, self.user_id, self.channel_id)
        return [bytes([KEY_PACKAGE]) + self.session.get_serialized_key_package()]

    def _execute(self, transition_id: int) -> None:
        if transition_id in self.pending_transitions:
            self.protocol_version = self.pending_transitions.pop(transition_id)
            self.executed.append(transition_id)

    def receive(self, message: Message) -> list[Message]:
        """One message from the gateway (a binary one as the socket carries it, seq first)."""
        if isinstance(message, dict):
            op, data = message["op"], message["d"]
            self.received.append(op)
            if op == PREPARE_TRANSITION:
                self.pending_transitions[data["transition_id"]] = data["protocol_version"]
                if data["transition_id"] == 0:
                    self._execute(0)
                    return []
                return [transition_ready(data["transition_id"])]
            if op == EXECUTE_TRANSITION:
                self._execute(data["transition_id"])
            elif op == PREPARE_EPOCH and data["epoch"] == 1:
                self.protocol_version = data["protocol_version"]
                return self._reinit()
            return []
        op = message[2]
        self.received.append(op)
        if op == EXTERNAL_SENDER:
            self.dave.set_external_sender(message[3:])
        elif op == PROPOSALS:
            kind = davey.ProposalsOperationType
            operation = kind.append if message[3] == 0 else kind.revoke
            result = self.dave.process_proposals(operation, message[4:])
            if isinstance(result, davey.CommitWelcome):
                welcome = result.welcome or b""
                return [bytes([COMMIT_WELCOME]) + result.commit + welcome]
        elif op in (ANNOUNCE_COMMIT, WELCOME):
            transition_id = struct.unpack_from(">H", message, 3)[0]
            try:
                if op == ANNOUNCE_COMMIT:
                    self.dave.process_commit(message[5:])
                else:
                    self.dave.process_welcome(message[5:])
            except Exception as e:  # discord.py catches them all, and recovers
                self.failures.append(str(e))
                return [invalid_commit_welcome(transition_id), *self._reinit()]
            if transition_id != 0:
                self.pending_transitions[transition_id] = self.protocol_version
                return [transition_ready(transition_id)]
        return []
