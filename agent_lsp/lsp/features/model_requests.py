"""The model requests: agent/session/setModel switches a session's model
(recorded in its log as `session/model`, in effect from the next step),
agent/model/list gives the models a picker offers
(`agent_lsp.workspace.session_models`), and agent/model/check sends one tiny
real request to a workspace's configured model (`agent_lsp.llm.check`), for
an editor's "check model connection"; agent/model/info says which model a
folder's sessions use and why, before any turn runs, so a client can say that
no model is configured (the built-in scripted demo model answers) and offer
to set one up."""

from __future__ import annotations


from pygls.exceptions import JsonRpcInvalidParams

from agent_lsp.config.environment import model_environment
from agent_lsp.llm.factory import chosen_model
from agent_lsp.lsp import protocol as wire
from agent_lsp.lsp.language_server import AgentLanguageServer
from agent_lsp.workspace.session_models import ModelSwitchError


async def session_set_model(ls: AgentLanguageServer, p: wire.SessionSetModelParams) -> wire.SessionSetModelResult:
    await ls.ready()
    host, agent = ls.agent_for(p.session_id)
    try:
        switched = host.models.set_model(agent, p.provider, p.model, p.effort)
    except ModelSwitchError as error:
        raise JsonRpcInvalidParams(str(error)) from None
    return wire.SessionSetModelResult.model_validate(switched)


async def model_list(ls: AgentLanguageServer, p: wire.ModelListParams) -> wire.ModelListResult:
    await ls.ready()
    host = ls.host_for_uri(p.workspace_uri)
    models, note = await host.models.list_models()
    return wire.ModelListResult(models=[wire.ModelChoice.model_validate(m) for m in models], note=note)


async def model_check_request(ls: AgentLanguageServer, p: wire.ModelCheckParams) -> wire.ModelCheckResult:
    from agent_lsp.llm.check import check_model  # with the providers, not at server start

    await ls.ready()
    host = ls.host_for_uri(p.workspace_uri)
    try:
        resolved = host.resolve_model()
    except ValueError as error:  # an unusable configuration: say which, as a result
        return wire.ModelCheckResult(ok=False, error=wire.events.LlmFailure(code="BAD_REQUEST", message=str(error)))
    return wire.ModelCheckResult.model_validate(await check_model(resolved))


async def model_info(ls: AgentLanguageServer, p: wire.ModelInfoParams) -> wire.ModelInfoResult:
    await ls.ready()
    host = ls.host_for_uri(p.workspace_uri)
    try:
        provider, model, why = chosen_model(host.settings.model, model_environment(host.env))
    except ValueError as e:
        raise JsonRpcInvalidParams(str(e)) from None
    return wire.ModelInfoResult(
        provider=provider, model=model, reason=why, demo=provider == "scripted" and why.startswith("auto"))


REQUESTS = {
    "agent/session/setModel": session_set_model,
    "agent/model/list": model_list,
    "agent/model/check": model_check_request,
    "agent/model/info": model_info,
}
