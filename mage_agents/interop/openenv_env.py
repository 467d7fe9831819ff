"""Any of our env ids and trials as an OpenEnv environment (server side).

:class:`MageTrialEnvironment` is one session's env: ``reset(seed, env_id=..., settings=...)``
starts a trial (the client may pick another served id and a few settings, see
:mod:`mage_agents.interop.spec`), ``step(MageAction(text=...))`` plays the agent's answer, and
``state`` is the public record of the trial. Errors are ``ValueError`` with one line: OpenEnv's
server sends them to the client as its own error message and keeps the session open.
:func:`serve_app` builds the FastAPI app (``python -m baselines.run serve-env`` runs it).
"""

from __future__ import annotations

import contextlib
import uuid
from functools import partial
from typing import Any

from fastapi import Request, WebSocketDisconnect
from fastapi.responses import JSONResponse
from openenv.core.env_server.http_server import create_fastapi_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import ConcurrencyConfig, EnvironmentMetadata

from mage_agents.interop.openenv_models import MageAction, MageObservation, MageState
from mage_agents.interop.spec import TrialSpec, make_env

__all__ = ["MAX_BODY_BYTES", "MageTrialEnvironment", "serve_app"]

MAX_BODY_BYTES = 1 << 20
"""The largest HTTP request body the server reads (WebSocket messages: ``serve-env``'s bound)."""


class MageTrialEnvironment(Environment[MageAction, MageObservation, MageState]):
    """One session: a trial (or a plain episode) of a served env id.

    Args:
        spec: The default env id and settings of a reset.
        served: Every env id a client may choose (``spec.env_id`` is added).
    """

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self, spec: TrialSpec, served: tuple[str, ...] = ()) -> None:
        super().__init__()
        self._default = spec
        self._served = tuple(dict.fromkeys((spec.env_id, *served)))
        self._spec: TrialSpec | None = None
        self._env: Any = None
        self._closed = False
        self._state = MageState(env_id=spec.env_id, settings=dict(spec.settings))

    def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        env_id: str | None = None,
        settings: dict[str, Any] | None = None,
        **unknown: Any,
    ) -> MageObservation:
        """Start a trial of ``env_id`` (default: the server's) with the task ``seed``.

        Raises:
            ValueError: For an unknown env id, a setting a client may not choose, or a bad
                value (the session keeps its previous trial).
        """
        if self._closed:  # OpenEnv reaps idle sessions but leaves their sockets open
            raise ValueError("this session was closed (idle too long): connect again.")
        if unknown:
            raise ValueError(
                f"reset takes seed, episode_id, env_id and settings, not {', '.join(unknown)}."
            )
        if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool) or seed < 0):
            raise ValueError("seed must be a non-negative integer.")
        spec = self._default.with_client_choice(self._served, env_id, settings)
        if spec != self._spec:
            env = make_env(spec)
            self._drop_env()
            self._env, self._spec = env, spec
        page, info = self._env.reset(seed=seed)
        self._state = MageState(
            episode_id=episode_id or str(uuid.uuid4()),
            env_id=spec.env_id,
            settings=dict(spec.settings),
            seed=seed,
            phase="play",
        )
        return self._observation(page, 0.0, False, info)

    def step(self, action: MageAction, timeout_s: float | None = None, **_: Any) -> MageObservation:
        """Play the agent's answer; raise ValueError when no trial is under way."""
        if self._closed:
            raise ValueError("this session was closed (idle too long): connect again.")
        if self._env is None or self._state.phase in ("idle", "done"):
            raise ValueError("no trial under way: call reset() to start one.")
        page, reward, terminated, truncated, info = self._env.step(action.text)
        state = self._state
        state.step_count += 1
        state.total_reward += float(reward)
        done = bool(terminated or truncated)
        state.phase = "done" if done else info.get("phase", "play")
        state.episode_index = int(info.get("episode_index", 0))
        state.record = self._record()
        return self._observation(page, float(reward), done, info)

    @property
    def state(self) -> MageState:
        """The session's public record (a copy: the client cannot change the session)."""
        return self._state.model_copy(deep=True)

    def close(self) -> None:
        """Close the session: its env, and any later reset or step."""
        self._closed = True
        self._drop_env()

    def _drop_env(self) -> None:
        if self._env is not None:
            self._env.close()
            self._env = None

    def get_metadata(self) -> EnvironmentMetadata:
        """Name the served ids for OpenEnv's ``/metadata``."""
        return EnvironmentMetadata(
            name="mage",
            description=f"Multi-episode trials of {', '.join(self._served)}",
            version="1",
        )

    def _observation(
        self, page: str, reward: float, done: bool, info: dict[str, Any]
    ) -> MageObservation:
        return MageObservation(
            page=page,
            legal_moves=[str(m) for m in info.get("legal_actions", [])],
            phase="reflect" if info.get("phase") == "reflect" else "play",
            episode_index=int(info.get("episode_index", 0)),
            invalid_action=bool(info.get("invalid_action", False)),
            trial=info.get("trial"),
            reward=reward,
            done=done,
        )

    def _record(self) -> dict[str, Any] | None:
        result = getattr(self._env, "result", None)
        if self._spec is None or self._spec.plain or not callable(result):
            return None
        try:
            return result().to_dict()
        except RuntimeError:  # no episode finished yet
            return None


def serve_app(
    spec: TrialSpec,
    served: tuple[str, ...] = (),
    max_sessions: int = 64,
    session_timeout_s: float | None = 600.0,
) -> Any:
    """Return OpenEnv's app serving ``spec`` (and the ids of ``served``), with bounded bodies.

    The settings are checked here, so a bad id or setting fails before the server listens.

    Args:
        spec: The default env id and settings.
        served: Further env ids a client may choose at reset.
        max_sessions: Most WebSocket sessions at once; one more is refused (``CAPACITY_REACHED``).
        session_timeout_s: Sessions idle this long are closed (``None``: never).
    """
    make_env(spec).close()
    for env_id in served:
        make_env(TrialSpec(env_id, spec.settings, spec.plain)).close()
    config = ConcurrencyConfig(max_concurrent_envs=max_sessions, session_timeout=session_timeout_s)
    app = create_fastapi_app(
        partial(MageTrialEnvironment, spec, tuple(served)),
        MageAction,
        MageObservation,
        concurrency_config=config,
    )
    # OpenEnv's stateless HTTP routes (POST /reset, /step) let our errors through as a bare 500;
    # the WebSocket sessions already answer them in OpenEnv's error form.
    app.add_exception_handler(ValueError, _bad_request)
    return _Guard(app, MAX_BODY_BYTES)


async def _bad_request(request: Request, error: Exception) -> JSONResponse:
    return JSONResponse({"detail": str(error)}, status_code=400)


class _Guard:
    """ASGI middleware: bounded HTTP bodies, quiet WebSocket disconnects.

    An HTTP body over ``limit`` bytes is refused (413) before it is read whole. A WebSocket
    client that vanishes is let go quietly: OpenEnv has freed its session by then, but its last
    ``close()`` raises, which the server would log as a traceback.
    """

    def __init__(self, app: Any, limit: int) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "websocket":
            with contextlib.suppress(WebSocketDisconnect):
                await self.app(scope, receive, send)
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        declared = headers.get(b"content-length", b"0")
        if not declared.isdigit() or int(declared) > self.limit:
            await JSONResponse({"detail": "request body too large"}, 413)(scope, receive, send)
            return
        seen = 0

        async def bounded() -> dict:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.limit:
                raise ValueError("request body too large")
            return message

        await self.app(scope, bounded, send)
