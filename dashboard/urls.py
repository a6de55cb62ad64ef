from django.contrib.auth import views as auth_views
from django.urls import path

from .views import account, calibrate, contradictions, duplicates, evaluate, facts, history, memories, recall, recalls

urlpatterns = [
    path("login/", account.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("", facts.fact_list, name="facts"),
    path("memories/new", memories.memory_create, name="memory_create"),
    path("facts/new", facts.fact_add, name="fact_add"),
    path("facts/bulk-delete", facts.fact_bulk_delete, name="fact_bulk_delete"),
    path("facts/bulk-undo", facts.fact_bulk_undo, name="fact_bulk_undo"),
    path("facts/<int:fact_id>/", facts.fact_detail, name="fact_detail"),
    path("facts/<int:fact_id>/row", facts.fact_row, name="fact_row"),
    path("facts/<int:fact_id>/edit", facts.fact_edit, name="fact_edit"),
    path("facts/<int:fact_id>/delete", facts.fact_delete, name="fact_delete"),
    path("facts/<int:fact_id>/forget", facts.fact_forget, name="fact_forget"),
    path("facts/<int:fact_id>/validity", facts.fact_validity, name="fact_validity"),
    path("duplicates/", duplicates.duplicate_list, name="duplicates"),
    path("duplicates/resolve", duplicates.duplicate_resolve, name="duplicate_resolve"),
    path("contradictions/", contradictions.contradiction_list, name="contradictions"),
    path("contradictions/resolve", contradictions.contradiction_resolve, name="contradiction_resolve"),
    path("contradictions/undo", contradictions.contradiction_undo, name="contradiction_undo"),
    path("recall/", recall.recall_debugger, name="recall"),
    path("recalls/", recalls.recall_log, name="recalls"),
    path("trash/", history.trash, name="trash"),
    path("trash/<int:entry_id>/undo", history.undo_delete, name="undo_delete"),
    path("audit/", history.audit_log, name="audit"),
    path("export.jsonl", history.export, name="export"),
    path("evaluate/", evaluate.evaluation, name="evaluation"),
    path("evaluate/compare", evaluate.evaluation_compare, name="evaluation_compare"),
    path("evaluate/adopt", evaluate.settings_adopt, name="settings_adopt"),
    path("evaluate/cases", evaluate.case_add, name="eval_case_add"),
    path("evaluate/cases/all", evaluate.case_list, name="eval_cases"),
    path("evaluate/cases/<int:case_id>/edit", evaluate.case_edit, name="eval_case_edit"),
    path("evaluate/cases/<int:case_id>/delete", evaluate.case_delete, name="eval_case_delete"),
    path("evaluate/import", evaluate.set_import, name="eval_import"),
    path("evaluate/shipped", evaluate.shipped_load, name="eval_shipped"),
    path("calibrate/", calibrate.calibrate, name="calibrate"),
    path("calibrate/<int:run_id>/step", calibrate.calibrate_step, name="calibrate_step"),
    path("calibrate/adopt", calibrate.calibrate_adopt, name="calibrate_adopt"),
]

handler404 = "dashboard.views.errors.not_found"
