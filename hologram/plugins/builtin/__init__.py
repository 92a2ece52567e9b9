"""The one list of built-in plugins (spec 000: `internal/plugins/all.go`).

A plugin is built in only if it needs a surface external plugins never get (spec 000:
"Which Plugins Stay Built-in"). Adding one is one line here; externalising one means
removing its line in the same change, because an external copy of a built-in name is
refused (the spec's "both copies" trap).
"""

from __future__ import annotations

from hologram.plugins.builtin.agentcli import AgentCLI
from hologram.plugins.builtin.cfgmgr import ConfigManager
from hologram.plugins.builtin.healthcheck import HealthCheck
from hologram.plugins.builtin.llmsource import LLMSources
from hologram.plugins.builtin.pluginmgr import PluginManager
from hologram.plugins.builtin.recoverydiag import RecoveryDiag
from hologram.plugins.builtin.seq import Sequencer
from hologram.plugins.builtin.skillmgr import SkillManager
from hologram.plugins.host import BuiltinFactory


def builtin_plugins() -> dict[str, BuiltinFactory]:
    return {
        "agentcli": AgentCLI,
        "cfgmgr": ConfigManager,
        "healthcheck": HealthCheck,
        "llmsource": LLMSources,
        "pluginmgr": PluginManager,
        "recoverydiag": RecoveryDiag,
        "seq": Sequencer,
        "skillmgr": SkillManager,
    }
