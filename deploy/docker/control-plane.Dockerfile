# Control plane image: pure Java (`-pl control-plane -am` builds proto and control-plane, not the
# native shim), so the build stage needs only the JDK. Build from the repository root:
#   docker build -f deploy/docker/control-plane.Dockerfile -t kube-verdict/control-plane .
FROM eclipse-temurin:17-jdk AS build
WORKDIR /src
COPY . .
RUN ./mvnw -B -q -DskipTests -pl control-plane -am package

FROM eclipse-temurin:17-jre
COPY --from=build /src/control-plane/target/kube-verdict-control-plane.jar /opt/kube-verdict/control-plane.jar
# Class-data sharing for a faster start, dumped by this image's own JVM (an archive is valid only
# for the JVM build and runtime image that made it) from the classes one start loads.
COPY control-plane/src/main/cds/classes.lst /opt/kube-verdict/control-plane.classes
RUN java -Xshare:dump -Xlog:disable -Xlog:all=error -XX:SharedClassListFile=/opt/kube-verdict/control-plane.classes \
      -XX:SharedArchiveFile=/opt/kube-verdict/control-plane.jsa -cp /opt/kube-verdict/control-plane.jar
USER 65532:65532
# JVM settings for a start on a small node (the sandbox launcher's Launcher.JVM_OPTIONS; EntryPointsTest).
ENTRYPOINT ["java", "-XX:Tier3InvocationThreshold=1000", "-XX:Tier3MinInvocationThreshold=500", "-XX:Tier3CompileThreshold=10000", "-XX:Tier3BackEdgeThreshold=300000", "-XX:Tier4InvocationThreshold=25000", "-XX:Tier4MinInvocationThreshold=3000", "-XX:Tier4CompileThreshold=75000", "-XX:Tier4BackEdgeThreshold=200000", "-XX:+UseTransparentHugePages", "-XX:+ExitOnOutOfMemoryError", "-XX:SharedArchiveFile=/opt/kube-verdict/control-plane.jsa", "-Xshare:auto", "-jar", "/opt/kube-verdict/control-plane.jar"]
CMD ["control-plane", "--help"]
