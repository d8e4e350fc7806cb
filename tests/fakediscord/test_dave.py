"""The fake voice gateway's DAVE part, proven in-process against davey alone: members join
through its external sender, commit, are welcomed, and hear each other's encrypted frames,
across leaves, joins mid-call, a revoked join, a failed welcome and a channel emptied and
refilled. And davey refuses what the gateway must not be able to get away with (a forged,
tampered or stale proposal), so the proof is not vacuous."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

import davey
import pytest
from cryptography.hazmat.primitives.asymmetric import ec

from tests.fakediscord import dave

CHANNEL = 1090123456789012345
A, B, C, D, E = 101, 202, 303, 404, 505
Message = dave.Message
Client = dave.DaveClient


Intercept = Callable[[str, int, Message], Message | None]


class Channel:
    """A voice channel: the gateway and its clients, with every message queued in order and
    delivered one at a time, as two websockets would (each side answers before it reads on).
    `intercept(direction, user, message)` may hold back (None) or change a message."""

    def __init__(self, channel_id: int = CHANNEL) -> None:
        self.gateway = dave.DaveGateway(channel_id)
        self.channel_id = channel_id
        self.clients: dict[int, Client] = {}
        self.queue: deque[tuple[str, int, Message]] = deque()
        self.seq: dict[int, int] = {}
        self.sent: list[tuple[int, int]] = []  # (user, op) of each gateway message delivered
        self.delivered: list[tuple[int, Message]] = []  # each, as the gateway made it
        self.intercept: Intercept | None = None

    def join(self, user_id: int, run: bool = True) -> Client:
        """A member connects: SESSION_DESCRIPTION (its key package leaves at once), and the
        external sender package right after it."""
        client = self.clients[user_id] = Client(user_id, self.channel_id)
        key_package = client.session_description()
        self.to_clients(self.gateway.connect(user_id))
        self.from_client(user_id, key_package)
        if run:
            self.run()
        return client

    def leave(self, user_id: int, run: bool = True) -> Client:
        """A member's voice websocket closes: the gateway hears of it, and it hears no more."""
        client = self.clients.pop(user_id)
        self.to_clients(self.gateway.disconnect(user_id))
        if run:
            self.run()
        return client

    def to_clients(self, outgoing: list[dave.Outgoing]) -> None:
        for out in outgoing:
            self.queue.append(("to", out.user_id, out.message))

    def from_client(self, user_id: int, messages: list[Message]) -> None:
        for message in messages:
            self.queue.append(("from", user_id, message))

    def run(self) -> None:
        while self.queue:
            direction, user, message = self.queue.popleft()
            if self.intercept is not None:
                changed = self.intercept(direction, user, message)
                if changed is None:
                    continue
                message = changed
            if direction == "to":
                client = self.clients.get(user)
                if client is None:
                    continue  # it left meanwhile
                self.delivered.append((user, message))
                if isinstance(message, bytes):  # the socket puts its seq first
                    self.seq[user] = self.seq.get(user, 0) + 1
                    message = dave.server_frame(self.seq[user], message)
                    self.sent.append((user, message[2]))
                else:
                    self.sent.append((user, message["op"]))
                self.from_client(user, client.receive(message))
            elif isinstance(message, bytes):
                self.to_clients(self.gateway.handle_binary(user, message))
            else:
                self.to_clients(self.gateway.handle_json(user, message))

    def ops_to(self, user_id: int) -> list[int]:
        return [op for user, op in self.sent if user == user_id]

    def assert_one_group(self) -> None:
        """Every client is in the gateway's group, at its epoch, at the leaf it counted, and
        all see the same members and epoch authenticator; no commit or welcome failed."""
        members = self.gateway.members
        assert set(members) == set(self.clients)
        authenticators = set()
        for user_id, client in self.clients.items():
            assert not client.failures, client.failures
            assert client.dave.ready
            assert client.dave.status == davey.SessionStatus.active
            assert client.dave.epoch == self.gateway.epoch
            assert client.dave.own_leaf_index == members[user_id]
            assert sorted(int(u) for u in client.dave.get_user_ids()) == sorted(members)
            authenticators.add(client.dave.get_epoch_authenticator())
        assert len(authenticators) == 1
        assert not self.gateway.transitions  # every transition executed

    def assert_all_hear_each_other(self) -> None:
        """A frame each member encrypts is decrypted by each of the others."""
        for sender in self.clients.values():
            frame = b"opus " + sender.user_id.to_bytes(8, "big") + bytes(range(40))
            sealed = sender.dave.encrypt_opus(frame)
            assert sealed != frame and sealed.endswith(b"\xfa\xfa")  # DAVE's magic marker
            for listener in self.clients.values():
                if listener is not sender:
                    heard = listener.dave.decrypt(sender.user_id, davey.MediaType.audio, sealed)
                    assert heard == frame


def cannot_decrypt(listener: Client, sender: Client) -> bool:
    frame = b"opus after the change" + bytes(30)
    sealed = sender.dave.encrypt_opus(frame)
    try:
        return listener.dave.decrypt(sender.user_id, davey.MediaType.audio, sealed) != frame
    except ValueError:
        return True


def test_two_members_make_a_group_through_the_external_sender() -> None:
    """Both pending members get the other's add and commit; the first commit wins, announced
    (29) to its committer alone, the other welcomed (30); the second is refused as stale."""
    channel = Channel()
    channel.join(A)
    assert channel.ops_to(A) == [dave.EXTERNAL_SENDER]  # alone: nothing to commit yet
    assert not channel.gateway.established
    channel.join(B)
    gateway = channel.gateway
    assert gateway.established and gateway.epoch == 1 and gateway.groups == 1
    committer = next(u for u, leaf in gateway.members.items() if leaf == 0)
    other = B if committer == A else A
    assert channel.ops_to(committer).count(dave.ANNOUNCE_COMMIT) == 1
    assert dave.ANNOUNCE_COMMIT not in channel.ops_to(other)
    assert channel.ops_to(other).count(dave.WELCOME) == 1
    assert any("stale" in reason for reason in gateway.refused), gateway.refused
    assert all(channel.ops_to(u)[-1] == dave.EXECUTE_TRANSITION for u in (A, B))
    assert channel.clients[A].executed == channel.clients[B].executed == [1]
    channel.assert_one_group()
    channel.assert_all_hear_each_other()
    code = channel.clients[A].dave.voice_privacy_code
    assert code and code == channel.clients[B].dave.voice_privacy_code


def test_three_members_joining_at_once_agree_on_one_group() -> None:
    """Three key packages before any commit: each pending member commits to the others' adds;
    a commit that misses an add already sent to its committer is refused, then one wins."""
    channel = Channel()
    for user in (A, B, C):
        channel.join(user, run=False)
    channel.run()
    gateway = channel.gateway
    assert sorted(gateway.members) == [A, B, C] and gateway.epoch == 1
    assert any("every proposal" in r for r in gateway.refused), gateway.refused
    welcomes = [m for _, m in channel.delivered if isinstance(m, bytes) and m[0] == dave.WELCOME]
    assert len(welcomes) == 2  # each cut to its member's secrets alone
    assert all(len(dave.Welcome.parse(m[3:]).secrets) == 1 for m in welcomes)
    channel.assert_one_group()
    channel.assert_all_hear_each_other()


def test_members_leave_and_join_mid_call() -> None:
    """A member leaves: a Remove proposal, a commit, and the others hear each other while the
    one who left cannot decrypt the new epoch; a member joining mid-call takes the leftmost
    blank leaf, is welcomed, and hears and is heard."""
    channel = Channel()
    for user in (A, B, C):
        channel.join(user)  # one by one: B founds the group with A, C joins it
    channel.assert_one_group()
    channel.assert_all_hear_each_other()
    gateway = channel.gateway
    assert gateway.epoch == 2
    middle = next(u for u, leaf in gateway.members.items() if leaf == 1)

    gone = channel.leave(middle)
    assert gateway.epoch == 3 and middle not in gateway.members
    assert len(gateway.leaves) == 3 and gateway.leaves[1] is None  # a blank leaf in the middle
    channel.assert_one_group()
    channel.assert_all_hear_each_other()
    assert all(cannot_decrypt(gone, speaker) for speaker in channel.clients.values())

    channel.join(D)
    assert gateway.members[D] == 1 and gateway.epoch == 4
    assert dave.ANNOUNCE_COMMIT not in channel.ops_to(D)  # a new member gets the welcome only
    channel.assert_one_group()
    channel.assert_all_hear_each_other()


def test_the_channel_empties_and_refills_with_a_new_group() -> None:
    """The last member left gets 24 with epoch 1 and 21 with transition 0, makes a new key
    package, and the next member to join starts a new group with it."""
    channel = Channel()
    channel.join(A)
    channel.join(B)
    first_code = channel.clients[A].dave.voice_privacy_code
    assert first_code
    channel.leave(B)
    gateway = channel.gateway
    assert not gateway.established and gateway.epoch == 0
    a = channel.clients[A]
    assert a.received[-2:] == [dave.PREPARE_EPOCH, dave.PREPARE_TRANSITION]
    assert a.executed[-1] == 0
    assert A in gateway.key_packages  # its new key package, pending
    assert a.dave.status == davey.SessionStatus.pending

    channel.join(C)
    assert gateway.established and gateway.epoch == 1 and gateway.groups == 2
    channel.assert_one_group()
    channel.assert_all_hear_each_other()
    assert a.dave.voice_privacy_code != first_code

    channel.leave(A)
    channel.leave(C)
    assert not gateway.established and not gateway.connected and not gateway.key_packages


def join_with_commits_held(channel: Channel, user: int) -> list[tuple[str, int, Message]]:
    """`user` joins while the members' commits (28) are held back: what was held (the caller
    resets `channel.intercept` once it has looked)."""
    held: list[tuple[str, int, Message]] = []

    def hold_commits(direction: str, sender: int, message: Message) -> Message | None:
        if direction == "from" and isinstance(message, bytes) and message[0] == 28:
            held.append((direction, sender, message))
            return None
        return message

    channel.intercept = hold_commits
    channel.join(user)
    return held


def test_a_join_revoked_before_its_commit_leaves_the_group_as_it_was() -> None:
    """A pending member leaves while the members' commits adding it are in flight: its add is
    revoked (27, revoke, by ProposalRef), the members drop their commits, the gateway refuses
    the commits that still arrive, and the group goes on; the next join works."""
    channel = Channel()
    channel.join(A)
    channel.join(B)
    held = join_with_commits_held(channel, C)
    assert len(held) == 2  # A and B each committed to C's add
    channel.intercept = None
    channel.leave(C)
    assert channel.ops_to(A)[-1] == channel.ops_to(B)[-1] == dave.PROPOSALS
    for user in (A, B):
        assert channel.clients[user].dave.status == davey.SessionStatus.active
    refused = len(channel.gateway.refused)
    channel.queue.extend(held)
    channel.run()
    assert len(channel.gateway.refused) == refused + 2
    assert all("not in flight" in r for r in channel.gateway.refused[-2:])
    assert channel.gateway.epoch == 1
    channel.assert_one_group()
    channel.assert_all_hear_each_other()

    channel.join(D)
    assert channel.gateway.epoch == 2
    channel.assert_one_group()
    channel.assert_all_hear_each_other()


def test_a_member_whose_welcome_fails_is_removed_and_added_again() -> None:
    """A welcome the member cannot process (here corrupted on the way): discord.py answers 31
    and a new key package; the gateway removes its leaf and adds it again in one commit."""
    channel = Channel()
    channel.join(A)
    spoiled: list[int] = []

    def spoil_first_welcome(direction: str, user: int, message: Message) -> Message | None:
        if direction == "to" and isinstance(message, bytes) and message[0] == 30 and not spoiled:
            spoiled.append(user)
            return message[:-1] + bytes([message[-1] ^ 1])  # the group info's tag
        return message

    channel.intercept = spoil_first_welcome
    channel.join(B)
    assert len(spoiled) == 1
    victim = channel.clients[spoiled[0]]
    assert victim.failures and "Welcome" in victim.failures[0], victim.failures
    assert channel.gateway.epoch == 2  # the commit that removed and added it again
    victim.failures.clear()
    channel.assert_one_group()
    channel.assert_all_hear_each_other()


@pytest.fixture
def group() -> Channel:
    """A, B in an established group, and C's key package (not sent) to propose."""
    channel = Channel()
    channel.join(A)
    channel.join(B)
    return channel


def status_of(session: davey.DaveSession) -> davey.SessionStatus:
    """Read afresh (a property that each call to davey may change)."""
    return session.status


def key_package_of(user_id: int) -> bytes:
    return davey.DaveSession(1, user_id, CHANNEL).get_serialized_key_package()


def flip_in_content(message: bytes) -> bytes:
    """One bit changed in the proposal's key package, after the signature was made."""
    signature_length = len(dave.vec(b"x" * 72))  # the DER signature's vector is 70-74 bytes
    at = len(message) - signature_length - 20
    return message[:at] + bytes([message[at] ^ 1]) + message[at + 1 :]


FORGERIES: dict[str, tuple[Callable[[dave.DaveGateway, bytes], bytes], str]] = {
    "signed with another key": (
        lambda g, kp: dave.external_proposal(
            ec.generate_private_key(ec.SECP256R1()), g.group_id, g.epoch, dave.add_proposal(kp)
        ),
        "InvalidSignature",
    ),
    "changed after signing": (
        lambda g, kp: flip_in_content(
            dave.external_proposal(g.key, g.group_id, g.epoch, dave.add_proposal(kp))
        ),
        "InvalidSignature",
    ),
    "of the previous epoch": (
        lambda g, kp: dave.external_proposal(g.key, g.group_id, g.epoch - 1, dave.add_proposal(kp)),
        "WrongEpoch",
    ),
    "of the next epoch": (
        lambda g, kp: dave.external_proposal(g.key, g.group_id, g.epoch + 1, dave.add_proposal(kp)),
        "WrongEpoch",
    ),
    "for another channel": (
        lambda g, kp: dave.external_proposal(
            g.key, dave.user_identity(CHANNEL + 1), g.epoch, dave.add_proposal(kp)
        ),
        "WrongGroupId",
    ),
    "from an external sender the group does not have": (
        lambda g, kp: dave.external_proposal(
            g.key, g.group_id, g.epoch, dave.add_proposal(kp), sender_index=1
        ),
        "UnauthorizedExternalSender",
    ),
}


@pytest.mark.parametrize("forgery", list(FORGERIES))
def test_davey_refuses_a_forged_or_stale_proposal(group: Channel, forgery: str) -> None:
    """The proof is not vacuous: davey checks what the gateway signs. Each bad proposal is
    refused with its own error, and the same proposal made right is accepted after it."""
    make, error = FORGERIES[forgery]
    gateway, member = group.gateway, group.clients[A].dave
    key_package = key_package_of(C)
    bad = make(gateway, key_package)
    with pytest.raises(ValueError, match=rf"ValidationError\({error}\)"):
        member.process_proposals(davey.ProposalsOperationType.append, dave.vec(bad))
    good = dave.external_proposal(
        gateway.key, gateway.group_id, gateway.epoch, dave.add_proposal(key_package)
    )
    result = member.process_proposals(davey.ProposalsOperationType.append, dave.vec(good))
    assert isinstance(result, davey.CommitWelcome) and result.welcome


def test_proposal_refs_are_davey_s_own() -> None:
    """The gateway's ProposalRef is the one davey stores the proposal under: revoking by it
    leaves nothing to commit (davey reverts), and a made-up ref is refused."""
    channel = Channel()
    channel.join(A)
    channel.join(B)
    gateway, member = channel.gateway, channel.clients[A].dave
    proposal = dave.external_proposal(
        gateway.key, gateway.group_id, gateway.epoch, dave.add_proposal(key_package_of(C))
    )
    assert member.process_proposals(davey.ProposalsOperationType.append, dave.vec(proposal))
    assert status_of(member) == davey.SessionStatus.awaiting_response
    revoke = dave.proposals_payload(dave.REVOKE, [dave.proposal_ref(proposal)])[1:]
    assert member.process_proposals(davey.ProposalsOperationType.revoke, revoke) is None
    assert status_of(member) == davey.SessionStatus.active
    made_up = dave.proposals_payload(dave.REVOKE, [bytes(32)])[1:]
    with pytest.raises(ValueError, match="RemovingPendingProposalFailed"):
        member.process_proposals(davey.ProposalsOperationType.revoke, made_up)


def test_the_gateway_refuses_another_users_key_package() -> None:
    """A key package whose credential names another user is never proposed."""
    gateway = dave.DaveGateway(CHANNEL)
    gateway.connect(A)
    assert gateway.key_package(A, key_package_of(B)) == []
    assert gateway.refused and "is not user" in gateway.refused[0]
    assert gateway.key_package(A, key_package_of(A)) == []  # alone: valid, nothing to send
    assert A in gateway.key_packages


def test_json_payloads_are_as_discord_sends_them() -> None:
    """The JSON opcodes' shapes (discord-api-types voice v8)."""
    assert dave.prepare_transition(3) == {
        "op": 21,
        "d": {"protocol_version": 1, "transition_id": 3},
    }
    assert dave.execute_transition(3) == {"op": 22, "d": {"transition_id": 3}}
    assert dave.transition_ready(3) == {"op": 23, "d": {"transition_id": 3}}
    assert dave.prepare_epoch(1) == {"op": 24, "d": {"protocol_version": 1, "epoch": 1}}
    assert dave.invalid_commit_welcome(3) == {"op": 31, "d": {"transition_id": 3}}
    assert dave.server_frame(0x1234, b"\x19abc") == b"\x12\x34\x19abc"


def test_a_join_in_flight_when_the_channel_empties_founds_the_new_group() -> None:
    """A member joins while the group is left with one member: the join's add is dropped with
    the old group, and the joining member and the last one found a new group together."""
    channel = Channel()
    channel.join(A)
    channel.join(B)
    held = join_with_commits_held(channel, C)
    assert len(held) == 2
    channel.intercept = None
    channel.leave(B)
    gateway = channel.gateway
    assert gateway.groups == 2 and gateway.epoch == 1 and sorted(gateway.members) == [A, C]
    # The old group's commits arrive late, with the new group's id and epoch: both refused
    # (one from a user not in the group, one from a leaf that is not its sender's).
    refused = len(gateway.refused)
    channel.queue.extend(held)
    channel.run()
    assert len(gateway.refused) == refused + 2 and gateway.epoch == 1
    channel.assert_one_group()
    channel.assert_all_hear_each_other()


def test_a_transition_is_executed_without_a_member_who_left_before_it_was_ready() -> None:
    """22 waits for every member's 23, but not for one who left meanwhile."""
    channel = Channel()
    channel.join(A)
    channel.join(B)

    def lose_c_ready(direction: str, user: int, message: Message) -> Message | None:
        if direction == "from" and user == C and isinstance(message, dict):
            return None  # C never says it is ready
        return message

    channel.intercept = lose_c_ready
    channel.join(C)
    transition = max(channel.gateway.transitions)
    assert channel.gateway.transitions[transition] == {C}
    assert transition not in channel.clients[A].executed
    channel.intercept = None
    channel.leave(C)
    assert transition in channel.clients[A].executed and transition in channel.clients[B].executed
    channel.assert_one_group()
    channel.assert_all_hear_each_other()


def test_a_transition_whose_wait_runs_out_is_executed_anyway() -> None:
    """A member that never says it is ready does not hold the others' transition for ever."""
    channel = Channel()
    channel.join(A)
    channel.join(B)

    def lose_c_ready(direction: str, user: int, message: Message) -> Message | None:
        return None if direction == "from" and user == C and isinstance(message, dict) else message

    channel.intercept = lose_c_ready
    channel.join(C)
    transition = max(channel.gateway.transitions)
    channel.to_clients(channel.gateway.expire_transition(transition))
    channel.run()
    assert not channel.gateway.transitions
    assert all(transition in channel.clients[u].executed for u in (A, B))
    assert channel.gateway.expire_transition(transition) == []  # once only


def test_a_member_that_sends_a_new_key_package_is_removed_and_added_again() -> None:
    """discord.py makes a new session and key package at every SESSION_DESCRIPTION, a resumed
    voice connection's (4015) too: the gateway removes its old leaf and adds the new one, and
    the call goes on."""
    channel = Channel()
    for user in (A, B, C):
        channel.join(user)
    epoch = channel.gateway.epoch
    channel.from_client(B, channel.clients[B].session_description())
    channel.run()
    assert channel.gateway.epoch == epoch + 1  # one commit: remove and add
    channel.assert_one_group()
    channel.assert_all_hear_each_other()


def test_the_commit_is_read_whole_to_find_the_welcome() -> None:
    """28 carries the commit and a bare Welcome with no length between: the gateway's reading
    ends the commit exactly where davey's serialisation does, with and without an update path,
    and a commit that adds a member without its welcome is refused."""
    channel = Channel()
    channel.join(A)
    channel.join(B)
    gateway, member = channel.gateway, channel.clients[A].dave
    key_package = key_package_of(C)
    proposal = dave.external_proposal(
        gateway.key, gateway.group_id, gateway.epoch, dave.add_proposal(key_package)
    )
    made = member.process_proposals(davey.ProposalsOperationType.append, dave.vec(proposal))
    assert isinstance(made, davey.CommitWelcome) and made.welcome
    commit, welcome = dave.parse_commit_welcome(made.commit + made.welcome)
    assert commit.message == made.commit and welcome is not None
    assert commit.references == [dave.proposal_ref(proposal)]
    assert commit.group_id == gateway.group_id and commit.epoch == gateway.epoch
    assert commit.sender_index == gateway.members[A]
    assert list(welcome.secrets) == [dave.key_package_ref(key_package)]
    (ref,) = welcome.secrets
    assert welcome.for_member(ref) == made.welcome  # one new member: the cut is the whole

    remove = dave.external_proposal(
        gateway.key, gateway.group_id, gateway.epoch, dave.remove_proposal(gateway.members[B])
    )
    made = member.process_proposals(davey.ProposalsOperationType.append, dave.vec(remove))
    assert isinstance(made, davey.CommitWelcome)
    commit, welcome = dave.parse_commit_welcome(made.commit + (made.welcome or b""))
    assert commit.message == made.commit and commit.path_leaf is not None  # a remove's path
    assert commit.path_leaf.identity == dave.user_identity(A)
    assert len(commit.references) == 2


def test_a_commit_adding_a_member_without_its_welcome_is_refused() -> None:
    channel = Channel()
    channel.join(A)

    def drop_welcomes(direction: str, user: int, message: Message) -> Message | None:
        if direction == "from" and isinstance(message, bytes) and message[0] == 28:
            commit, _ = dave.parse_commit_welcome(message[1:])
            return bytes([28]) + commit.message
        return message

    channel.intercept = drop_welcomes
    channel.join(B)
    assert not channel.gateway.established
    assert all("without a welcome" in r for r in channel.gateway.refused), channel.gateway.refused
    assert len(channel.gateway.refused) == 2
