"""Ninth hostile round: the console commands given bad arguments and forged files.

The first two cases failed before their fixes (jamb-zoo: an AttributeError traceback from
rl_zoo3 for a ``-conf`` YAML of the wrong shape; jamb-web: werkzeug's own ``sys.exit(1)``
with a bare "Name or service not known", the command's "cannot listen" message and exit
status 2 never reached); the others are forged files that already gave a clear answer,
kept so they stay so.
"""

from __future__ import annotations

import json
import socket

import numpy as np
import pytest

from agents.apps.cli import evaluate as evaluate_cli
from agents.search import VALUE_DIR, ValueNet


# ---------------------------------------------------------------------- jamb-zoo
@pytest.mark.parametrize(
    "text, says",
    [
        ("[1, 2]\n", "expected a mapping of env ids to hyper-parameters, got list"),
        ("Jamb-classic-v1: [1, 2]\n", "key 'Jamb-classic-v1': expected a mapping"),
        ("default: 5\n", "key 'default': expected a mapping"),
    ],
)
def test_jamb_zoo_refuses_a_conf_file_of_the_wrong_shape(tmp_path, capsys, text, says):
    pytest.importorskip("rl_zoo3", reason="jamb-zoo needs the zoo extra")
    from agents.apps.cli import zoo as zoo_cli

    conf = tmp_path / "hp.yml"
    conf.write_text(text)
    rc = zoo_cli.main(
        [
            "train",
            "--algo",
            "ppo_mask",
            "--env",
            "Jamb-classic-v1",
            "-conf",
            str(conf),
            "-n",
            "10",
            "-f",
            str(tmp_path / "logs"),
        ]
    )
    assert rc == 2  # before: rl_zoo3's AttributeError traceback ('list' object has no attribute 'keys')
    assert says in capsys.readouterr().err


flask = pytest.importorskip("flask", reason="jamb-web needs Flask: pip install -e '.[web]'")

from agents.apps.cli import web as web_cli  # noqa: E402
from agents.apps.web.server import Lobby, create_app  # noqa: E402


# ---------------------------------------------------------------------- jamb-web
def test_jamb_web_on_a_taken_port_exits_2_naming_the_address(capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        try:
            rc = web_cli.main(["--port", str(port), "--records", "unused"])
        except SystemExit as exc:  # before: werkzeug's sys.exit(1)
            rc = exc.code
    assert rc == 2
    err = capsys.readouterr().err
    assert f"error: cannot listen on 127.0.0.1:{port}:" in err and "in use" in err


def _lobby_with_a_game(tmp_path):
    lobby = Lobby(records=tmp_path)
    client = create_app(lobby).test_client()
    made = client.post(
        "/api/games", data=json.dumps({"ruleset": "classic", "seed": 3}), content_type="application/json"
    )
    assert made.status_code == 201
    return lobby, client, made.get_json()["id"]


@pytest.mark.parametrize(
    "seats_file",
    [
        "[]",
        '"x"',
        "null",
        "\x00\x01",
        "[" * 100_000 + "]" * 100_000,
        '{"seats": [[1]]}',
        '{"seats": [{"kind": "human", "name": [1]}]}',
        '{"coach": {"a": 1}}',
        '{"coach": NaN}',
    ],
)
def test_a_forged_seats_file_of_any_shape_reloads_the_game(tmp_path, seats_file):
    lobby, client, id = _lobby_with_a_game(tmp_path)
    (tmp_path / f"{id}.json").write_text(seats_file)
    lobby._tables.clear()  # the server restarted: the table comes back from its files
    got = client.get(f"/api/games/{id}")
    assert got.status_code == 200, got.get_data(as_text=True)
    assert got.get_json()["seats"][0]["kind"] == "human"


@pytest.mark.parametrize("ruleset", ["/etc/passwd", "../../x.yaml"])
def test_a_record_naming_a_ruleset_path_is_refused_by_the_server_unread(tmp_path, ruleset):
    lobby, client, id = _lobby_with_a_game(tmp_path)
    path = tmp_path / f"{id}.jsonl"
    head, *rest = path.read_text().splitlines()
    path.write_text("\n".join([json.dumps(dict(json.loads(head), ruleset=ruleset)), *rest]) + "\n")
    lobby._tables.clear()
    got = client.get(f"/api/games/{id}")
    assert got.status_code == 400 and "not a preset of this server" in got.get_json()["error"]


# ---------------------------------------------------------------------- value networks
@pytest.mark.parametrize(
    "meta, says",
    [
        ({"ruleset": "/etc/hostname"}, "trained for ruleset '/etc/hostname'"),
        ({"layers": -1}, "at least one layer"),
        ({"mean": [1]}, "mean and std must be finite numbers"),
    ],
)
def test_a_value_network_with_a_forged_meta_is_a_usage_error(tmp_path, capsys, meta, says):
    src = VALUE_DIR / "value_classic_down.npz"
    arrays = dict(np.load(src))
    arrays["meta"] = np.array(json.dumps(ValueNet.load(src).meta | {"format": 2, "layers": 3} | meta))
    forged = tmp_path / "forged.npz"
    np.savez(forged, **arrays)
    with pytest.raises(SystemExit) as exc:
        evaluate_cli.main(
            [
                "--ruleset",
                "classic_down",
                "--agents",
                f"search:{forged}",
                "--games",
                "2",
                "--out",
                str(tmp_path / "res/"),
                "--no-progress",
            ]
        )
    assert exc.value.code == 2
    assert says in capsys.readouterr().err
    assert not (tmp_path / "res").exists()
