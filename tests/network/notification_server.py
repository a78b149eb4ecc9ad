#!/usr/bin/env python3
"""A desktop notification server on a private session bus, for the tests.

It owns org.freedesktop.Notifications on the bus DBUS_SESSION_BUS_ADDRESS names
(one the test started with dbus-daemon), answers notify-send as a desktop's
server does, and appends every Notify call to FILE as a JSON line: app_name,
summary, body. It prints "ready" once it owns the name.

Usage: notification_server.py FILE     (needs python3-gi: GLib and Gio)
"""
import json
import sys

from gi.repository import Gio, GLib

INTERFACE = """
<node>
  <interface name="org.freedesktop.Notifications">
    <method name="GetServerInformation">
      <arg type="s" direction="out"/><arg type="s" direction="out"/>
      <arg type="s" direction="out"/><arg type="s" direction="out"/>
    </method>
    <method name="GetCapabilities"><arg type="as" direction="out"/></method>
    <method name="Notify">
      <arg type="s" direction="in"/><arg type="u" direction="in"/><arg type="s" direction="in"/>
      <arg type="s" direction="in"/><arg type="s" direction="in"/><arg type="as" direction="in"/>
      <arg type="a{sv}" direction="in"/><arg type="i" direction="in"/>
      <arg type="u" direction="out"/>
    </method>
    <method name="CloseNotification"><arg type="u" direction="in"/></method>
  </interface>
</node>
"""

FILE = sys.argv[1]
SHOWN = [0]


def on_call(connection, sender, path, interface, method, params, invocation):
    if method == "GetServerInformation":
        invocation.return_value(GLib.Variant("(ssss)", ("px-test-notifications", "parallex", "1", "1.2")))
    elif method == "GetCapabilities":
        invocation.return_value(GLib.Variant("(as)", (["body"],)))
    elif method == "Notify":
        app, _replaces, _icon, summary, body, _actions, _hints, _timeout = params.unpack()
        with open(FILE, "a") as f:
            f.write(json.dumps({"app_name": app, "summary": summary, "body": body}) + "\n")
        SHOWN[0] += 1
        invocation.return_value(GLib.Variant("(u)", (SHOWN[0],)))
    else:
        invocation.return_value(None)


def on_bus(connection, name):
    node = Gio.DBusNodeInfo.new_for_xml(INTERFACE)
    connection.register_object("/org/freedesktop/Notifications", node.interfaces[0], on_call, None, None)


def on_name(connection, name):
    print("ready", flush=True)


def on_lost(connection, name):
    print("could not own " + name, flush=True)
    sys.exit(1)


Gio.bus_own_name(Gio.BusType.SESSION, "org.freedesktop.Notifications", Gio.BusNameOwnerFlags.NONE, on_bus, on_name,
                 on_lost)
GLib.MainLoop().run()
