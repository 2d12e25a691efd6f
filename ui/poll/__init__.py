"""The class poll's glue: who presents and who votes (``classroom``), the projector, the phone, the concept
check, the class's element (``live``) and lnviz's HTTP routes, the room's stream among them (``routes``). It
stands on the page kit and, through the routes, the stage's."""
