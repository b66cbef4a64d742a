{{/* The application name: the chart's, or nameOverride. */}}
{{- define "kube-verdict.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 50 | trimSuffix "-" -}}
{{- end -}}

{{/* Prefix of every object's name: the release name, with the application name unless it has it. */}}
{{- define "kube-verdict.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
The selector of a component's pods: only the name, as in the kustomize base. A selector is
immutable, so it carries neither the version nor the chart.
Call with (dict "ctx" $ "component" "agent").
*/}}
{{- define "kube-verdict.selectorLabels" -}}
app.kubernetes.io/name: {{ include "kube-verdict.name" .ctx }}-{{ .component }}
{{- end -}}

{{/* The recommended labels. Call with (dict "ctx" $ "component" "agent"). */}}
{{- define "kube-verdict.labels" -}}
{{ include "kube-verdict.selectorLabels" . }}
{{ include "kube-verdict.sharedLabels" . }}
{{- end -}}

{{/* The recommended labels but the name. Call with (dict "ctx" $ "component" "agent"). */}}
{{- define "kube-verdict.sharedLabels" -}}
app.kubernetes.io/component: {{ .component }}
app.kubernetes.io/part-of: kube-verdict
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/version: {{ .ctx.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .ctx.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .ctx.Chart.Name .ctx.Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end -}}

{{/* An image reference: by digest when one is given, else by tag (default: appVersion). Call with (dict "ctx" $ "image" .Values.agent.image). */}}
{{- define "kube-verdict.image" -}}
{{- if .image.digest -}}
{{ .image.repository }}@{{ .image.digest }}
{{- else -}}
{{ .image.repository }}:{{ .image.tag | default .ctx.Chart.AppVersion }}
{{- end -}}
{{- end -}}

{{- define "kube-verdict.controlPlaneName" -}}
{{ include "kube-verdict.fullname" . }}-control-plane
{{- end -}}

{{- define "kube-verdict.agentName" -}}
{{ include "kube-verdict.fullname" . }}-agent
{{- end -}}
