// The history page refreshes from the live channel's feed: a WebSocket to /console/live (the
// console session's cookie; same origin only), and a reload shortly after a frame about
// something this person may see (the notifications of a transition are written just after it).
(function () {
  var note = document.getElementById("live-note");
  var scheme = location.protocol === "https:" ? "wss://" : "ws://";
  var socket;
  try {
    socket = new WebSocket(scheme + location.host + "/console/live");
  } catch (error) {
    return;
  }
  socket.onopen = function () {
    if (note) note.hidden = false;
  };
  socket.onmessage = function (event) {
    var frame;
    try { frame = JSON.parse(event.data); } catch (error) { return; }
    if (["activity", "notification", "message", "conversation"].indexOf(frame.type) >= 0) {
      socket.onmessage = null;
      setTimeout(function () { location.reload(); }, 1500);
    }
  };
})();
